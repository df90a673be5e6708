/**
 * The persistence seam: every SQL statement and every JDBC call of the engine, one store per
 * table group with its statements as named text blocks, and the values that cross the seam.
 * <p>
 * Part of pgqueue's engine ({@code io.pgqueue.internal.*}): not an API; it may change in any release
 * and is left out of the published Javadoc. Applications, extensions and the Spring Boot starter use
 * the public packages.
 */
package io.pgqueue.internal.store;
