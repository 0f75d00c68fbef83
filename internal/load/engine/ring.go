package engine

// ring is a FIFO queue that reuses its storage: the loop's timers and backlogs are pushed
// in the order they fall due, so their heads are all a loop ever needs to look at.
type ring[T any] struct {
	buf        []T
	head, size int
}

func (r *ring[T]) len() int { return r.size }

func (r *ring[T]) push(v T) {
	if r.size == len(r.buf) {
		grown := make([]T, max(16, 2*len(r.buf)))
		for i := 0; i < r.size; i++ {
			grown[i] = r.buf[(r.head+i)%len(r.buf)]
		}
		r.buf, r.head = grown, 0
	}
	r.buf[(r.head+r.size)%len(r.buf)] = v
	r.size++
}

func (r *ring[T]) peek() (T, bool) {
	var zero T
	if r.size == 0 {
		return zero, false
	}
	return r.buf[r.head], true
}

func (r *ring[T]) pop() (T, bool) {
	v, ok := r.peek()
	if ok {
		var zero T
		r.buf[r.head] = zero
		r.head = (r.head + 1) % len(r.buf)
		r.size--
	}
	return v, ok
}
