package validate

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/kubectl-validate/pkg/openapiclient"
	"sigs.k8s.io/kubectl-validate/pkg/utils"
	"sigs.k8s.io/kubectl-validate/pkg/validator"
)

// schemaVersion is the newest Kubernetes whose schemas kubectl-validate v0.0.4 (its last
// release, May 2024) embeds. The manifests use no field newer than 1.28, and a field the
// current k8s.io/api would add to them shows here as an unknown field.
const schemaVersion = "1.30"

// manifests are internal/k8s's golden files: the run's objects with both node selectors,
// and without them.
var manifests = []string{"lab.yaml", "lab-plain.yaml"}

// Both manifests are valid for the API server, unknown fields refused, the security
// settings (non-root, read-only root, no capabilities), the NetworkPolicies, the Role and
// the Secret included.
func TestK8sManifestsValidateOffline(t *testing.T) {
	v := newValidator(t)
	for _, name := range manifests {
		if n := validate(t, v, readManifest(t, name)); n != 7 {
			t.Errorf("%s: validated %d objects, want 7 (the role, the pod, the secret, the service, 2 network policies, the job)", name, n)
		}
	}
}

// The validator is not a rubber stamp: it refuses a misspelt field and wrong types, in the
// Job, the pods' security settings and a NetworkPolicy.
func TestK8sValidatorRefusesBadManifests(t *testing.T) {
	v := newValidator(t)
	lab := readManifest(t, "lab.yaml")
	for _, c := range []struct{ from, to string }{
		{"completionMode: Indexed", "completionsMode: Indexed"},
		{"backoffLimit: 0", "backoffLimit: none"},
		{"restartPolicy: Never", "restartPolicy: [Never]"},
		{"readOnlyRootFilesystem: true", "readOnlyRootFileSystem: true"},
		{"runAsNonRoot: true", "runAsNonRoot: yes please"},
		{"policyTypes:", "policyType:"},
	} {
		bad := bytes.Replace(lab, []byte(c.from), []byte(c.to), 1)
		if bytes.Equal(bad, lab) {
			t.Fatalf("lab.yaml has no %q", c.from)
		}
		if err := firstError(t, v, bad); err == nil {
			t.Errorf("with %q in place of %q the manifests passed", c.to, c.from)
		} else {
			t.Logf("%q refused: %v", c.to, err)
		}
	}
}

func readManifest(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatalf("%v (internal/k8s's golden test writes it: UPDATE=1 go test ./internal/k8s/ -run Golden)", err)
	}
	return data
}

// newValidator is kubectl-validate over its embedded schemas and its patches for them: no
// cluster, no network.
func newValidator(t *testing.T) *validator.Validator {
	t.Helper()
	v, err := validator.New(openapiclient.NewOverlay(openapiclient.HardcodedPatchLoader(schemaVersion), openapiclient.NewHardcodedBuiltins(schemaVersion)))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// documents splits data into its non-empty YAML documents.
func documents(t *testing.T, data []byte) [][]byte {
	t.Helper()
	docs, err := utils.SplitYamlDocuments(data)
	if err != nil {
		t.Fatal(err)
	}
	var kept [][]byte
	for _, doc := range docs {
		if !utils.IsEmptyYamlDocument(doc) {
			kept = append(kept, doc)
		}
	}
	return kept
}

// validate checks every document of data, failing t for each invalid one, and returns how
// many objects it checked.
func validate(t *testing.T, v *validator.Validator, data []byte) int {
	t.Helper()
	docs := documents(t, data)
	for _, doc := range docs {
		gvk, obj, err := v.Parse(doc)
		if err == nil {
			err = v.Validate(obj)
		}
		if err != nil {
			t.Errorf("%s: %v\n%s", gvk.Kind, err, doc)
		}
	}
	return len(docs)
}

// firstError is the first document of data the validator refuses, nil if it takes them all.
func firstError(t *testing.T, v *validator.Validator, data []byte) error {
	t.Helper()
	for _, doc := range documents(t, data) {
		_, obj, err := v.Parse(doc)
		if err == nil {
			err = v.Validate(obj)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
