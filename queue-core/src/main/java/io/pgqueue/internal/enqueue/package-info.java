/**
 * The engine behind {@code QueueClient}: requests checked and turned into rows, rows routed to
 * their shard (group commit, outbox and its relay), graphs of dependent jobs written in one
 * transaction, and dedup policies applied to a key an active job holds.
 * <p>
 * Part of pgqueue's engine ({@code io.pgqueue.internal.*}): not an API; it may change in any release
 * and is left out of the published Javadoc. Applications, extensions and the Spring Boot starter use
 * the public packages.
 */
package io.pgqueue.internal.enqueue;
