package k8s

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// What keeps a run's agents to their coordinator on a cluster: the run's secret in a Secret
// mounted into every pod (the agents answer only calls carrying it), NetworkPolicies that let
// only the coordinator reach the agents and only the load agents reach the server, pods that
// run as a user with no capabilities on a read-only root, and the Role the launcher needs.

// AgentUID is the user the agents run as: the image's arena user (deploy/Dockerfile).
const AgentUID = 10001

// SecretKey is the key of the run's secret in its Secret, and secretDir where it is mounted.
const (
	SecretKey = "secret"
	secretDir = "/var/run/arena"
)

// LabelCoordinator marks a pod in the namespace that may call the agents: a coordinator
// running inside the cluster. One outside it is named by Options.CoordinatorCIDR.
const LabelCoordinator = "arena.dev/coordinator"

func secretName(runID string) string  { return "arena-" + runID + "-secret" }
func serviceName(runID string) string { return "arena-" + runID + "-server" }

// secret holds the run's secret, readable by the agents' pods only through their mount.
func secret(o Options) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: secretName(o.RunID), Namespace: o.Namespace, Labels: map[string]string{LabelRun: o.RunID}},
		Type:       corev1.SecretTypeOpaque,
		StringData: map[string]string{SecretKey: o.Secret},
	}
}

// serverService is a headless Service over the server pod: its name resolves to the pod's
// address, the one address the load agents send load to (--server-address), fixed before
// the pod has an address.
func serverService(o Options) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: serviceName(o.RunID), Namespace: o.Namespace, Labels: map[string]string{LabelRun: o.RunID}},
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 map[string]string{LabelRun: o.RunID, LabelRole: RoleServer},
			PublishNotReadyAddresses: true,
			Ports:                    []corev1.ServicePort{{Name: portName, Port: int32(o.Port), TargetPort: intstr.FromString(portName), Protocol: corev1.ProtocolTCP}},
		},
	}
}

// policies are the run's NetworkPolicies: the load agents take calls on their port from the
// coordinator and from this run's server agent (whose lab deals the load out); the server
// takes calls on its agent port from the coordinator, and anything (the contender's port is
// the run's) from this run's load agents. Nothing else reaches either.
func policies(o Options) []*networkingv1.NetworkPolicy {
	port := intstr.FromInt32(int32(o.Port))
	tcp := corev1.ProtocolTCP
	agentPort := []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}}
	role := func(r string) networkingv1.NetworkPolicyPeer {
		return networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelRun: o.RunID, LabelRole: r}}}
	}
	coordinators := []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelCoordinator: "true"}}}}
	if o.CoordinatorCIDR != "" {
		coordinators = append(coordinators, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: o.CoordinatorCIDR}})
	}
	policy := func(name, r string, rules ...networkingv1.NetworkPolicyIngressRule) *networkingv1.NetworkPolicy {
		return &networkingv1.NetworkPolicy{
			TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
			ObjectMeta: metav1.ObjectMeta{Name: "arena-" + o.RunID + "-" + name, Namespace: o.Namespace, Labels: map[string]string{LabelRun: o.RunID}},
			Spec: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{LabelRun: o.RunID, LabelRole: r}},
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
				Ingress:     rules,
			},
		}
	}
	return []*networkingv1.NetworkPolicy{
		policy("load", RoleLoad, networkingv1.NetworkPolicyIngressRule{From: append(coordinators, role(RoleServer)), Ports: agentPort}),
		policy("server", RoleServer,
			networkingv1.NetworkPolicyIngressRule{From: coordinators, Ports: agentPort},
			networkingv1.NetworkPolicyIngressRule{From: []networkingv1.NetworkPolicyPeer{role(RoleLoad)}}),
	}
}

// LauncherRole is the least `arena run --kubernetes` needs in the namespace: create, watch
// and delete what a run places, nothing cluster-wide, and no reading of Secrets (get or
// list would hand over every Secret of the namespace): it creates its run's and deletes it
// by name.
func LauncherRole(namespace string) *rbacv1.Role {
	manage := []string{"create", "get", "list", "delete"}
	return &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Name: "arena-launcher", Namespace: namespace},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create", "get", "list", "watch", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: manage},
			{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: manage},
			{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"networkpolicies"}, Verbs: manage},
		},
	}
}

// podSecurity runs the pod as the arena user, its files' group too, under the runtime's
// default seccomp profile.
func podSecurity() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr(true),
		RunAsUser:      ptr(int64(AgentUID)),
		RunAsGroup:     ptr(int64(AgentUID)),
		FSGroup:        ptr(int64(AgentUID)),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// containerSecurity drops every capability on a read-only root. taskset needs none: the lab
// sets the affinity of its own processes and their children (sched_setaffinity on a process
// of the same user), never another user's, which alone would take CAP_SYS_NICE.
func containerSecurity() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr(false),
		ReadOnlyRootFilesystem:   ptr(true),
		RunAsNonRoot:             ptr(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// writable are the folders an agent writes on its read-only root, each an emptyDir: /tmp
// (a server agent's runs, the JVM's perf data, HOME), and the lab's record of verified
// builds. The contenders' builds are in the image and not written at run time.
var writable = []struct{ name, path string }{{"tmp", "/tmp"}, {"verified", "/lab/.arena/verified"}}

// volumes are the pod's: the run's secret, read by the arena user only, and the writable
// folders.
func volumes(runID string) []corev1.Volume {
	vs := []corev1.Volume{{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: secretName(runID), DefaultMode: ptr(int32(0o440)),
	}}}}
	for _, w := range writable {
		vs = append(vs, corev1.Volume{Name: w.name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	}
	return vs
}

func mounts() []corev1.VolumeMount {
	ms := []corev1.VolumeMount{{Name: "secret", MountPath: secretDir, ReadOnly: true}}
	for _, w := range writable {
		ms = append(ms, corev1.VolumeMount{Name: w.name, MountPath: w.path})
	}
	return ms
}
