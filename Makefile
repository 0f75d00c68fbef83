# The test command README.md shows; .ci/run calls it.
.PHONY: test test-unit test-manifests lint bench

# golangci-lint from PATH, else where `go install` puts it (.ci/run installs it there).
GOLANGCI_LINT ?= $(shell command -v golangci-lint 2>/dev/null || echo "$$(go env GOPATH)/bin/golangci-lint")

# Everything: unit tests, every contender against the contract, a short isolation run,
# and the report in headless Chromium.
test: lint
	./arena build
	go vet ./...
	go test -p 1 -count=1 -timeout 45m ./...
	$(MAKE) test-manifests

# The Kubernetes manifests (internal/k8s/testdata, written by its golden test) against the API
# server's schemas: kubectl-validate, in a module of its own so that its pinned k8s.io/* and
# API server modules stay out of arena's go.mod. No cluster; a second or so.
test-manifests:
	cd internal/k8s/validate && go vet ./... && go test -count=1 ./...

# The shape the code keeps (.golangci.yml): no function over 80 lines outside tests, no
# direct prints, and what govet, staticcheck, errcheck, ineffassign and unused find.
lint:
	$(GOLANGCI_LINT) run ./...

# Unit tests only: no contenders, no browser.
test-unit:
	go test -count=1 -short ./...
	$(MAKE) test-manifests

# The benchmarks of the lab's own client that docs/performance.md reports: the engine beside
# wrk with the stall check, then the chat and the stream clients, then the load agents. Needs
# wrk; arena bench builds the contender it measures against.
bench:
	./arena bench --against spring-webflux
	./arena bench chat --users 10000
	./arena bench stream
	./arena bench agents
