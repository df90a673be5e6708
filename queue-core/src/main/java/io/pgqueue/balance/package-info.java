/**
 * The partition balancer's settings and what it reports: its rounds, its decisions and why a
 * partition moves. The balancer itself (median filter, Gini index with hysteresis, friction) is part
 * of the engine.
 */
package io.pgqueue.balance;
