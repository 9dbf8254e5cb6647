// Package netlink emulates an uplink on loopback, for the reference server (its /_ref/config
// "link"), the demo server's "network speed" and the benchmark: request bodies are read at a
// set rate, shared by every request on the link, and every answer leaves one round trip after
// the handler wrote it. On loopback a file arrives in milliseconds; through a Link it arrives
// as it would over, say, 20 Mbit/s with 60 ms of round trip, so that chunk sizes, progress
// cadence and pause can be seen and measured (docs/protocol.md section 8).
//
// A link is steady (Link.Set: one rate, one round trip) or follows a schedule
// (Link.SetSchedule: steps, each with its rate and round trip, or a blackout), to test and
// measure a client that must follow a link that changes: a train into a tunnel, a phone from
// Wi-Fi to cellular. The schedule's clock starts when the link is first used after it was set,
// so that a test's page load does not count; the last step holds for ever. Every change, by the
// schedule or by Set, holds for the requests in flight as well as the new ones:
//   - a new rate applies inside a body being read, to the bytes not yet carried: the bytes
//     already carried stay carried and the booked ones keep their place (no burst of credit,
//     no time lost);
//   - an answer is held for the round trip in force when the handler writes it;
//   - in a blackout no byte of a body comes through and no answer leaves, and a request that
//     arrives waits for the end before its handler runs; then all goes on where it stood. The
//     connections stay open, as a TCP connection outlives a tunnel.
//
// It holds over HTTP/2 as over HTTP/1.1: the rate and the round trip are applied in each
// request's handler, so each stream of a shared connection gets its answer its own round trip
// late, and a request without a body is not held behind an upload on the same connection.
// HTTP/2's flow control does not get in the way: net/http's server window (1 MiB per stream
// and per connection) holds a fraction of a second of the links emulated here, and its window
// updates go back as the handler reads, at the link's rate (h2_test.go measures one upload at
// 100 Mbit/s reaching the same share of the link over both versions). Over HTTP/2 the client
// sees its bytes leave as fast as the stream's window takes them, as on a real link.
//
// A client that gives a request up (over HTTP/1.1 it closes the connection, over HTTP/2 it
// resets the stream) still delivers the link's queue (Link.SetQueue; DefaultQueue, a second,
// unless set): the oldest of the bytes it had handed to the link go on arriving at the link's
// rate, up to the queue's worth of the rate in force when it gave up, and the rest are dropped;
// requests that arrive meanwhile wait behind them. So a real uplink sends what sat in its
// bottleneck queue and the sender's kernel buffer after the sender has gone (consumer
// connections hold 0.2 to 2 s). A queue of 0 drops every byte not yet carried at once, which is
// kinder than any real link. The bytes handed over are those the server holds: over HTTP/2 the
// stream's window (net/http's 1 MiB); over HTTP/1.1, from a server of Listen, those read from
// the socket ahead of the link (as fast as the client sends them below 25 Mbit/s, up to 2 MiB
// ahead above), which is also how the close is seen at once (listen.go). (Read only as the link
// carried them, the bytes in the two loopback sockets' buffers, megabytes, went on arriving for
// many seconds: harsher than any real link.) Above 25 Mbit/s a close is seen once the pump has
// read what the sockets held, and the queue counts from there. The client sees its HTTP/1.1
// bytes leave sooner too: its own count of them (XMLHttpRequest's upload progress) runs ahead
// of the link, further than a real link's buffers would let it.
package netlink
