/**
 * What an enqueue needs besides the insert: dedup policies applied to a key an active job holds,
 * payloads written as JSON within the size limit, and single enqueues coalesced into one INSERT.
 * <p>
 * Part of pgqueue's engine ({@code io.pgqueue.internal.*}): not an API; it may change in any release
 * and is left out of the published Javadoc. Applications, extensions and the Spring Boot starter use
 * the public packages.
 */
package io.pgqueue.internal.enqueue;
