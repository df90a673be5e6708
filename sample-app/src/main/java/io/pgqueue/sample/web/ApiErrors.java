package io.pgqueue.sample.web;

import java.time.format.DateTimeParseException;
import java.util.Map;

import io.pgqueue.InvalidJobException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Bad input is the client's fault: answer 400 with the queue's own explanation.
 */
@RestControllerAdvice
public class ApiErrors {

    private static final Logger log = LoggerFactory.getLogger(ApiErrors.class);

    @ExceptionHandler({ InvalidJobException.class, IllegalArgumentException.class, DateTimeParseException.class })
    ResponseEntity<Map<String, String>> badRequest(RuntimeException ex) {
        log.debug("Bad request: {}", ex.toString());
        return ResponseEntity.status(HttpStatus.BAD_REQUEST).body(Map.of("error", String.valueOf(ex.getMessage())));
    }
}
