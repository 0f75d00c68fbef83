package engine

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The loop's system calls on non-blocking sockets never block, so they go in without the
// scheduler's bookkeeping (RawSyscall): a loop locked to its thread pays the kernel's price
// and nothing more, as wrk's C does. Only the epoll wait that may sleep is a real Syscall.

func rawRead(fd int, b []byte) (int, unix.Errno) {
	for {
		n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		if e != unix.EINTR {
			return int(n), e
		}
	}
}

func rawWrite(fd int, b []byte) (int, unix.Errno) {
	for {
		n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		if e != unix.EINTR {
			return int(n), e
		}
	}
}

// pollNow returns the events ready now, without sleeping.
func pollNow(ep int, ev []unix.EpollEvent) int {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_WAIT, uintptr(ep), uintptr(unsafe.Pointer(&ev[0])), uintptr(len(ev)), 0, 0, 0)
	if e != 0 {
		return 0
	}
	return int(n)
}

// pwait2 is whether epoll_pwait2 (Linux 5.11: a timeout in nanoseconds) works here; else
// waits are rounded down to milliseconds and the rest spun.
var pwait2 = func() bool {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return false
	}
	defer unix.Close(ep)
	ev := make([]unix.EpollEvent, 1)
	ts := unix.Timespec{}
	_, _, e := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(ep), uintptr(unsafe.Pointer(&ev[0])), 1, uintptr(unsafe.Pointer(&ts)), 0, 0)
	return e == 0
}()

// waitFor sleeps until an event or d (< 0: until an event), whichever comes first.
func waitFor(ep int, ev []unix.EpollEvent, d time.Duration) int {
	if pwait2 {
		var tsp uintptr
		var ts unix.Timespec
		if d >= 0 {
			ts = unix.NsecToTimespec(int64(d))
			tsp = uintptr(unsafe.Pointer(&ts))
		}
		n, _, e := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(ep), uintptr(unsafe.Pointer(&ev[0])), uintptr(len(ev)), tsp, 0, 0)
		if e != 0 {
			return 0
		}
		return int(n)
	}
	ms := -1
	if d >= 0 {
		ms = int(d / time.Millisecond)
	}
	n, err := unix.EpollWait(ep, ev, ms)
	if err != nil {
		return 0
	}
	return n
}

// socketError is a connection's pending error (SO_ERROR), 0 when none.
func socketError(fd int) unix.Errno {
	v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return errnoOf(err)
	}
	return unix.Errno(v)
}
