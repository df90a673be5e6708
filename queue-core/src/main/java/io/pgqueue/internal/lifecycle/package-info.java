/**
 * The start/stop contract every thread owner of the engine keeps.
 * <p>
 * Part of pgqueue's engine ({@code io.pgqueue.internal.*}): not an API; it may change in any release
 * and is left out of the published Javadoc. Applications, extensions and the Spring Boot starter use
 * the public packages.
 */
package io.pgqueue.internal.lifecycle;
