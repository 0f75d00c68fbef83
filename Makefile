# The test command README.md shows; .ci/run calls it.
.PHONY: test test-unit bench

# Everything: unit tests, every contender against the contract, a short isolation run,
# and the report in headless Chromium.
test:
	./arena build
	go vet ./...
	go test -p 1 -count=1 -timeout 45m ./...

# Unit tests only: no contenders, no browser.
test-unit:
	go test -count=1 -short ./...

# The engine beside wrk, and the stall check (docs/performance.md).
bench:
	./arena build spring-webflux
	go run ./internal/bench
