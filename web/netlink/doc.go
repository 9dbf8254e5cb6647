// Package netlink emulates an uplink on loopback, for the reference server (its /_ref/config
// "link"), the demo server's "network speed" and the benchmark: request bodies are read at a
// set rate, shared by every request on the link, and every answer leaves one round trip after
// the handler wrote it. On loopback a file arrives in milliseconds; through a Link it arrives
// as it would over, say, 20 Mbit/s with 60 ms of round trip, so that chunk sizes, progress
// cadence and pause can be seen and measured (docs/protocol.md section 8).
package netlink
