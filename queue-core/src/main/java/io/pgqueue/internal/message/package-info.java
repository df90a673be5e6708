/**
 * The message queues' engine: long polls woken by notifications, fenced receipt handles, SQS's
 * checks, the counts, the retention sweep and VACUUM. The API is {@code io.pgqueue.message}.
 * <p>
 * Part of pgqueue's engine ({@code io.pgqueue.internal.*}): not an API; it may change in any release
 * and is left out of the published Javadoc. Applications, extensions and the Spring Boot starter use
 * the public packages.
 */
package io.pgqueue.internal.message;
