package k8s

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kubectl-validate/pkg/openapiclient"
	"sigs.k8s.io/kubectl-validate/pkg/utils"
	"sigs.k8s.io/kubectl-validate/pkg/validator"

	"github.com/arena-lab/arena/internal/golden"
)

// goldenOptions are the options of testdata/lab.yaml: four load agents and both node
// selectors, so that every part of the objects shows.
func goldenOptions() Options {
	return Options{
		Image:              "arena:test",
		Secret:             "golden-secret-golden-secret-golden-secret",
		Agents:             4,
		RunID:              "golden",
		ServerCPUs:         2,
		AgentCPUs:          1,
		ServerMemoryMiB:    4096,
		AgentMemoryMiB:     1024,
		ServerNodeSelector: map[string]string{"arena.dev/pool": "server"},
		AgentNodeSelector:  map[string]string{"arena.dev/pool": "load"},
	}
}

// The YAML is what testdata/lab.yaml holds, byte for byte, every time.
func TestK8sYAMLGolden(t *testing.T) {
	got, err := YAML(goldenOptions())
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "lab.yaml", got)
	again, err := YAML(goldenOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, again) {
		t.Error("two calls with the same options wrote different YAML")
	}
}

// The objects say what issue 13 asks for: Guaranteed QoS with whole cores, an Indexed
// Job without retries, the load agents kept off the server's node.
func TestK8sObjects(t *testing.T) {
	objs, err := Build(goldenOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []corev1.PodSpec{objs.Server.Spec, objs.Load.Spec.Template.Spec} {
		c := spec.Containers[0]
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, lim := c.Resources.Requests[r], c.Resources.Limits[r]
			if req.Cmp(lim) != 0 {
				t.Errorf("%s: %s request %s, limit %s: not Guaranteed QoS", c.Args, r, req.String(), lim.String())
			}
		}
		if cpu := c.Resources.Requests[corev1.ResourceCPU]; cpu.MilliValue()%1000 != 0 {
			t.Errorf("%s: CPU %s is not whole cores: the static CPU manager gives no exclusive cores", c.Args, cpu.String())
		}
		if spec.RestartPolicy != corev1.RestartPolicyNever || c.ImagePullPolicy != corev1.PullIfNotPresent {
			t.Errorf("%s: restart policy %s, pull policy %s", c.Args, spec.RestartPolicy, c.ImagePullPolicy)
		}
		if c.ReadinessProbe == nil || c.ReadinessProbe.TCPSocket == nil {
			t.Errorf("%s: readiness probe %+v, want a TCP probe (the kubelet holds no secret)", c.Args, c.ReadinessProbe)
		}
	}
	const held = " --secret-file /var/run/arena/secret --server-address arena-golden-server"
	if got := strings.Join(objs.Server.Spec.Containers[0].Args, " "); got != "agent --listen 0.0.0.0:7600 --name server --role server"+held {
		t.Errorf("server agent's args %q", got)
	}
	if got := strings.Join(objs.Load.Spec.Template.Spec.Containers[0].Args, " "); got != "agent --listen 0.0.0.0:7600 --name load-$(JOB_COMPLETION_INDEX) --role load"+held {
		t.Errorf("load agents' args %q", got)
	}
	js := objs.Load.Spec
	if js.CompletionMode == nil || *js.CompletionMode != "Indexed" || *js.Completions != 4 || *js.Parallelism != 4 || *js.BackoffLimit != 0 {
		t.Errorf("job spec: mode %v, completions %v, parallelism %v, backoff limit %v", *js.CompletionMode, *js.Completions, *js.Parallelism, *js.BackoffLimit)
	}
	anti := js.Template.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(anti) != 1 || anti[0].TopologyKey != "kubernetes.io/hostname" || anti[0].LabelSelector.MatchLabels[LabelRole] != RoleServer ||
		anti[0].LabelSelector.MatchLabels[LabelRun] != "golden" {
		t.Errorf("load agents' required anti-affinity %+v, want off this run's server's node", anti)
	}
	if s, l := objs.Server.Spec.Containers[0].Image, js.Template.Spec.Containers[0].Image; s != "arena:test" || l != "arena:test" {
		t.Errorf("images: server %s, load %s; want arena:test for both by default", s, l)
	}
	o := goldenOptions()
	o.LoadImage = "ko.local/arena:load"
	other, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	if s, l := other.Server.Spec.Containers[0].Image, other.Load.Spec.Template.Spec.Containers[0].Image; s != o.Image || l != o.LoadImage {
		t.Errorf("with a load image of their own: server %s, load %s", s, l)
	}
	for _, l := range []map[string]string{objs.Server.Labels, objs.Load.Labels, js.Template.Labels} {
		if l[LabelRun] != "golden" {
			t.Errorf("labels %v lack %s=golden", l, LabelRun)
		}
	}
}

// testdata/lab.yaml, and the objects without node selectors, are valid for the API server
// of Kubernetes 1.30: kubectl-validate checks them offline against the OpenAPI schemas it
// embeds (the newest it has; nothing here is newer than 1.28), unknown fields included.
func TestK8sManifestsValidateOffline(t *testing.T) {
	v := newValidator(t)
	lab, err := os.ReadFile(filepath.Join("testdata", "lab.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	plain := goldenOptions()
	plain.ServerNodeSelector, plain.AgentNodeSelector = nil, nil
	bare, err := YAML(plain)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"testdata/lab.yaml": lab, "without node selectors": bare} {
		if n := validate(t, v, data); n != 7 {
			t.Errorf("%s: validated %d objects, want 7 (the role, the pod, the secret, the service, 2 network policies, the job)", name, n)
		}
	}
}

// The validator is not a rubber stamp: it refuses a misspelt field and a wrong type.
func TestK8sValidatorRefusesBadManifests(t *testing.T) {
	v := newValidator(t)
	lab, err := os.ReadFile(filepath.Join("testdata", "lab.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to string }{
		{"completionMode: Indexed", "completionsMode: Indexed"},
		{"backoffLimit: 0", "backoffLimit: none"},
		{"restartPolicy: Never", "restartPolicy: [Never]"},
	} {
		bad := bytes.Replace(lab, []byte(c.from), []byte(c.to), 1)
		if bytes.Equal(bad, lab) {
			t.Fatalf("testdata/lab.yaml has no %q", c.from)
		}
		docs, err := utils.SplitYamlDocuments(bad)
		if err != nil {
			t.Fatal(err)
		}
		refused := false
		for _, doc := range docs {
			if utils.IsEmptyYamlDocument(doc) {
				continue
			}
			_, obj, err := v.Parse(doc)
			if err == nil {
				err = v.Validate(obj)
			}
			if err != nil {
				t.Logf("%q refused: %v", c.to, err)
				refused = true
			}
		}
		if !refused {
			t.Errorf("with %q in place of %q the manifests passed", c.to, c.from)
		}
	}
}

// newValidator is kubectl-validate over its embedded schemas for Kubernetes 1.30 and its
// patches for them: no cluster, no network.
func newValidator(t *testing.T) *validator.Validator {
	t.Helper()
	const version = "1.30"
	v, err := validator.New(openapiclient.NewOverlay(openapiclient.HardcodedPatchLoader(version), openapiclient.NewHardcodedBuiltins(version)))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// validate checks every document of data and returns how many objects it checked.
func validate(t *testing.T, v *validator.Validator, data []byte) int {
	t.Helper()
	docs, err := utils.SplitYamlDocuments(data)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, doc := range docs {
		if utils.IsEmptyYamlDocument(doc) {
			continue
		}
		gvk, obj, err := v.Parse(doc)
		if err == nil {
			err = v.Validate(obj)
		}
		if err != nil {
			t.Errorf("%s: %v\n%s", gvk.Kind, err, doc)
		}
		n++
	}
	return n
}

// Validate names each wrong field and says what to give.
func TestK8sOptionsValidate(t *testing.T) {
	good := goldenOptions().WithDefaults()
	if err := good.Validate(); err != nil {
		t.Fatalf("golden options: %v", err)
	}
	for _, c := range []struct {
		change func(*Options)
		want   string
	}{
		{func(o *Options) { o.Agents = 0 }, "agents 0: give at least 1"},
		{func(o *Options) { o.Image = "" }, "name the agent image"},
		{func(o *Options) { o.Image = "arena dev" }, "no spaces"},
		{func(o *Options) { o.ServerCPUs = 0 }, "server cores 0: give at least 1"},
		{func(o *Options) { o.AgentCPUs = -1 }, "agent cores -1"},
		{func(o *Options) { o.AgentMemoryMiB = 10 }, "agent memory 10 MiB"},
		{func(o *Options) { o.Port = 70000 }, "port 70000"},
		{func(o *Options) { o.Namespace = "Arena_Lab" }, `namespace "Arena_Lab"`},
		{func(o *Options) { o.RunID = "" }, "run id: give one"},
		{func(o *Options) { o.RunID = "Run.1" }, `run id "Run.1"`},
		{func(o *Options) { o.RunID = strings.Repeat("a", 60) }, "must be no more than 63"},
		{func(o *Options) { o.ServerNodeSelector = map[string]string{"bad key!": "x"} }, `server node selector key "bad key!"`},
		{func(o *Options) { o.AgentNodeSelector = map[string]string{"pool": "not ok"} }, `agent node selector value "not ok"`},
	} {
		o := good
		c.change(&o)
		err := o.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one that says %q", err, c.want)
		}
		if _, err := Build(o); err == nil {
			t.Errorf("Build accepted options Validate refuses (%s)", c.want)
		}
	}
	var zero Options
	if err := zero.WithDefaults().Validate(); err == nil || !strings.Contains(err.Error(), "agents 0") || !strings.Contains(err.Error(), "name the agent image") {
		t.Errorf("zero options: %v, want every missing field named", err)
	}
}
