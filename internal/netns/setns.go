package netns

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// Listen opens a listener inside the named host's namespace, from this process. A socket
// keeps the namespace it was made in, so the listener serves that host's network while the
// test process itself stays in the root namespace. An empty host means the root namespace.
func (t *Topology) Listen(host, network, addr string) (net.Listener, error) {
	var l net.Listener
	err := t.in(host, func() error {
		var err error
		l, err = net.Listen(network, addr)
		return err
	})
	return l, err
}

// DialTimeout connects from inside the named host's namespace (empty: the root namespace).
func (t *Topology) DialTimeout(host, network, addr string, timeout time.Duration) (net.Conn, error) {
	var c net.Conn
	err := t.in(host, func() error {
		var err error
		c, err = net.DialTimeout(network, addr, timeout)
		return err
	})
	return c, err
}

// in runs f on an OS thread switched into the host's network namespace. The switch is per
// thread, so the goroutine is locked to its thread, and the thread is given back only once
// it is in the root namespace again; if switching back fails the thread is left locked,
// which makes the runtime retire it with the goroutine.
func (t *Topology) in(host string, f func() error) error {
	if host == "" {
		return f()
	}
	h, err := t.host(host)
	if err != nil {
		return err
	}
	target, err := os.Open("/run/netns/" + h.NS)
	if err != nil {
		return fmt.Errorf("netns: %w", err)
	}
	defer target.Close()

	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("netns: %w", err)
			return
		}
		defer self.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("netns: entering %s: %w", h.NS, err)
			return
		}
		ferr := f()
		if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("netns: leaving %s: %w", h.NS, err)
			return
		}
		runtime.UnlockOSThread()
		done <- ferr
	}()
	return <-done
}
