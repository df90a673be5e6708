package io.pgqueue.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A file a node records facts in, one line each. Every line is written and appended at once, so a
 * process killed after {@link #append(String)} returned loses nothing of it (the operating system
 * keeps what a killed process wrote).
 */
final class RecordFile {

    private final Path file;

    RecordFile(Path file) {
        this.file = file;
    }

    /** Appends one line. */
    synchronized void append(String line) {
        try {
            Files.writeString(this.file, line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
