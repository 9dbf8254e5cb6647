// Package interop holds the tests that run the protocol core end to end over the native
// transport (core/httptransport) against real HTTP servers on 127.0.0.1: the project's strict
// reference server with each of its injected faults, fake-gcs-server (an independent
// implementation, embedded as a library), and a soak of many uploads through random faults.
// It has no code of its own outside its tests.
package interop
