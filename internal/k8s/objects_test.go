package k8s

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	k8sjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/client-go/kubernetes/scheme"

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

// plainOptions are the options of testdata/lab-plain.yaml: the golden ones without node
// selectors, the objects most runs place.
func plainOptions() Options {
	o := goldenOptions()
	o.ServerNodeSelector, o.AgentNodeSelector = nil, nil
	return o
}

// goldenFiles are the files of testdata/ the YAML of each options is kept in.
func goldenFiles() map[string]Options {
	return map[string]Options{"lab.yaml": goldenOptions(), "lab-plain.yaml": plainOptions()}
}

// The YAML is what testdata/lab.yaml and lab-plain.yaml hold, byte for byte, every time.
// Those files are what the nested module internal/k8s/validate checks against the API
// server's schemas with kubectl-validate (kept out of this module's go.mod): a change to the
// objects shows here first, then there.
func TestK8sYAMLGolden(t *testing.T) {
	for name, o := range goldenFiles() {
		got, err := YAML(o)
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, name, got)
		again, err := YAML(o)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, again) {
			t.Errorf("%s: two calls with the same options wrote different YAML", name)
		}
	}
}

// The YAML decodes strictly into the current k8s.io/api types, the release this module
// builds against: no unknown or duplicate field, every kind known. The OpenAPI validation
// (enums, formats, required fields) is the nested module internal/k8s/validate's.
func TestK8sYAMLDecodesStrictly(t *testing.T) {
	strict := k8sjson.NewSerializerWithOptions(k8sjson.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, k8sjson.SerializerOptions{Yaml: true, Strict: true})
	for name, o := range goldenFiles() {
		data, err := YAML(o)
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, doc := range bytes.Split(data, []byte("\n---\n"))[1:] {
			_, gvk, err := strict.Decode(doc, nil, nil)
			if err != nil {
				t.Errorf("%s: %v\n%s", name, err, doc)
				continue
			}
			kinds = append(kinds, gvk.Kind)
		}
		if got := strings.Join(kinds, ","); got != "Role,Pod,Secret,Service,NetworkPolicy,NetworkPolicy,Job" {
			t.Errorf("%s: kinds %s", name, got)
		}
	}
	// Strictness is real: a misspelt field is refused.
	bad := []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  restartPolicyy: Never\n")
	if _, _, err := strict.Decode(bad, nil, nil); err == nil {
		t.Error("a misspelt field decoded without error")
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
