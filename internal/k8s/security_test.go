package k8s

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// Every pod runs as the arena user, never root, with no capabilities and a read-only root;
// what it writes goes to emptyDirs; the secret is mounted, never in the arguments or the
// environment.
func TestK8sPodsRunUnprivileged(t *testing.T) {
	objs, err := Build(goldenOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []corev1.PodSpec{objs.Server.Spec, objs.Load.Spec.Template.Spec} {
		ps, c := spec.SecurityContext, spec.Containers[0]
		if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.RunAsUser == nil || *ps.RunAsUser == 0 {
			t.Errorf("%s: pod security %+v, want a non-root user", c.Args, ps)
		}
		cs := c.SecurityContext
		if cs == nil || cs.ReadOnlyRootFilesystem == nil || !*cs.ReadOnlyRootFilesystem || cs.AllowPrivilegeEscalation == nil || *cs.AllowPrivilegeEscalation ||
			cs.Capabilities == nil || !slices.Equal(cs.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(cs.Capabilities.Add) != 0 {
			t.Errorf("%s: container security %+v, want a read-only root, no escalation, every capability dropped", c.Args, cs)
		}
		mounted := map[string]bool{}
		for _, m := range c.VolumeMounts {
			mounted[m.MountPath] = true
		}
		if !mounted["/tmp"] || !mounted[secretDir] {
			t.Errorf("%s: mounts %+v, want /tmp writable and the secret", c.Args, c.VolumeMounts)
		}
		for _, e := range c.Env {
			if strings.Contains(e.Value, goldenOptions().Secret) {
				t.Errorf("%s: the secret is in the environment (%s)", c.Args, e.Name)
			}
		}
		if strings.Contains(strings.Join(c.Args, " "), goldenOptions().Secret) {
			t.Errorf("%s: the secret is in the arguments", c.Args)
		}
	}
	if objs.Secret.StringData[SecretKey] != goldenOptions().Secret {
		t.Errorf("the run's Secret holds %v", objs.Secret.StringData)
	}
}

// The NetworkPolicies: the load agents are reached on their port from the coordinator and
// this run's server agent only; the server from the coordinator on its agent port, and from
// this run's load agents on any port; nothing else.
func TestK8sNetworkPolicies(t *testing.T) {
	o := goldenOptions()
	o.CoordinatorCIDR = "10.1.2.3/32"
	objs, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	byRole := map[string]*networkingv1.NetworkPolicy{}
	for _, p := range objs.Policies {
		byRole[p.Spec.PodSelector.MatchLabels[LabelRole]] = p
		if p.Spec.PodSelector.MatchLabels[LabelRun] != "golden" || !slices.Equal(p.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
			t.Errorf("policy %s selects %v, types %v", p.Name, p.Spec.PodSelector.MatchLabels, p.Spec.PolicyTypes)
		}
	}
	peers := func(r networkingv1.NetworkPolicyIngressRule) string {
		var out []string
		for _, p := range r.From {
			switch {
			case p.IPBlock != nil:
				out = append(out, "cidr "+p.IPBlock.CIDR)
			case p.PodSelector != nil && p.PodSelector.MatchLabels[LabelCoordinator] == "true":
				out = append(out, "coordinator")
			case p.PodSelector != nil:
				out = append(out, p.PodSelector.MatchLabels[LabelRun]+"/"+p.PodSelector.MatchLabels[LabelRole])
			}
		}
		if len(r.Ports) == 0 {
			return strings.Join(out, ",") + " on any port"
		}
		return strings.Join(out, ",") + " on " + r.Ports[0].Port.String()
	}
	load, server := byRole[RoleLoad], byRole[RoleServer]
	if load == nil || server == nil || len(load.Spec.Ingress) != 1 || len(server.Spec.Ingress) != 2 {
		t.Fatalf("policies %+v", objs.Policies)
	}
	if got := peers(load.Spec.Ingress[0]); got != "coordinator,cidr 10.1.2.3/32,golden/server on 7600" {
		t.Errorf("load agents reached by %s", got)
	}
	if got := peers(server.Spec.Ingress[0]) + "; " + peers(server.Spec.Ingress[1]); got != "coordinator,cidr 10.1.2.3/32 on 7600; golden/load on any port" {
		t.Errorf("server reached by %s", got)
	}
}

// The launcher's Role is namespaced and asks for nothing beyond the kinds a run places.
func TestK8sLauncherRoleIsLeast(t *testing.T) {
	r := LauncherRole("arena")
	if r.Namespace != "arena" || r.Kind != "Role" {
		t.Errorf("role %s/%s of kind %s", r.Namespace, r.Name, r.Kind)
	}
	for _, rule := range r.Rules {
		for _, v := range rule.Verbs {
			if v == "*" || v == "update" || v == "patch" || v == "escalate" || v == "bind" {
				t.Errorf("rule %+v grants %s", rule, v)
			}
		}
		for _, res := range rule.Resources {
			if !strings.Contains(Kinds, strings.TrimSuffix(strings.TrimSuffix(res, "s"), "ie")) {
				t.Errorf("rule %+v names %s, which a run does not place", rule, res)
			}
		}
		// get, list or watch on Secrets reads every Secret of the namespace (issue 34, 8).
		if slices.Contains(rule.Resources, "secrets") {
			for _, v := range rule.Verbs {
				if v != "create" && v != "delete" {
					t.Errorf("rule %+v lets the launcher %s Secrets", rule, v)
				}
			}
		}
	}
}
