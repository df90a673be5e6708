package io.pgqueue.sample;

import java.net.URI;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.SqsClientBuilder;

/** AWS SDK for Java v2 clients of the sample application's SQS endpoint, for the tests. */
final class JavaSqsClients {

    private JavaSqsClients() {
    }

    /**
     * @param port the application's port
     * @param key an access key id
     * @param secret its secret
     * @return a builder of a client of {@code http://127.0.0.1:<port>/sqs} signing as the key
     */
    static SqsClientBuilder builder(int port, String key, String secret) {
        return SqsClient.builder()
            .endpointOverride(URI.create("http://127.0.0.1:" + port + "/sqs"))
            .region(Region.US_EAST_1)
            .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(key, secret)))
            .httpClient(UrlConnectionHttpClient.create());
    }
}
