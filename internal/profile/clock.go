package profile

import "golang.org/x/sys/unix"

// monotonicMicros is CLOCK_MONOTONIC in µs: the clock V8 stamps a CPU profile's samples
// with (base::TimeTicks), so a Node profile can be cut to the load's window.
func monotonicMicros() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return ts.Sec*1_000_000 + ts.Nsec/1_000
}
