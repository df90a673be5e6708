/**
 * The worker runtime of one node: the fetch loops, the pools' buffers and handler slots, the
 * executor of one attempt, the batched writes, the lease keeper, the listener, the housekeeping, and the
 * drainer that runs jobs on a test's thread.
 * <p>
 * Part of pgqueue's engine ({@code io.pgqueue.internal.*}): not an API; it may change in any release
 * and is left out of the published Javadoc. Applications, extensions and the Spring Boot starter use
 * the public packages.
 */
package io.pgqueue.internal.worker;
