/**
 * Shards: the installation's shards and the cached partition map, the fixed key-to-partition
 * hash and the journaled move of a partition.
 * <p>
 * Part of pgqueue's engine ({@code io.pgqueue.internal.*}): not an API; it may change in any release
 * and is left out of the published Javadoc. Applications, extensions and the Spring Boot starter use
 * the public packages.
 */
package io.pgqueue.internal.shard;
