/**
 * What operators do to many jobs at once: bulk actions run batch after batch, recorded with their
 * progress.
 * <p>
 * Part of pgqueue's engine ({@code io.pgqueue.internal.*}): not an API; it may change in any release
 * and is left out of the published Javadoc. Applications, extensions and the Spring Boot starter use
 * the public packages.
 */
package io.pgqueue.internal.admin;
