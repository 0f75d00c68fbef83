// Package validate holds, in its test, the check that the manifests arena writes for
// Kubernetes (../testdata/*.yaml, written and checked byte for byte by internal/k8s's golden
// test) are valid for the API server: sigs.k8s.io/kubectl-validate over the OpenAPI schemas
// it embeds, offline. It is a module of its own because kubectl-validate holds k8s.io/* at
// the release it was built with (v0.30) and brings the API server's modules along; the
// main module's k8s.io/* stay at the current release and its go.mod holds only what the
// binary and its tests use. `make test` runs it.
package validate
