/**
 * The partition balancer's engine: its pure decisions (median filter, Gini index with hysteresis,
 * friction, affinity, drains), its lease and its rounds. Its settings and reports are public in
 * {@code io.pgqueue.balance}.
 * <p>
 * Part of pgqueue's engine ({@code io.pgqueue.internal.*}): not an API; it may change in any release
 * and is left out of the published Javadoc. Applications, extensions and the Spring Boot starter use
 * the public packages.
 */
package io.pgqueue.internal.balance;
