package k8s

import (
	"fmt"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Objects are what a run places on the cluster, in the order they are created.
type Objects struct {
	Server   *corev1.Pod // the server agent
	Secret   *corev1.Secret
	Service  *corev1.Service // the server's address, by name
	Policies []*networkingv1.NetworkPolicy
	Load     *batchv1.Job
}

// portName names the agents' container port; the readiness probes refer to it.
const portName = "agent"

// hostnameKey is the node label that tells nodes apart for anti-affinity.
const hostnameKey = "kubernetes.io/hostname"

// Build makes the objects for o (with its defaults filled), or says what is wrong with o.
func Build(o Options) (Objects, error) {
	o = o.WithDefaults()
	if err := o.Validate(); err != nil {
		return Objects{}, err
	}
	serverLabels := map[string]string{LabelRun: o.RunID, LabelRole: RoleServer}
	loadLabels := map[string]string{LabelRun: o.RunID, LabelRole: RoleLoad}

	server := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      serverName(o.RunID),
			Namespace: o.Namespace,
			Labels:    serverLabels,
		},
		Spec: podSpec(agentContainer(o, o.Image, RoleServer, "server", o.ServerCPUs, o.ServerMemoryMiB), o.RunID, o.ServerNodeSelector, nil),
	}

	// Required anti-affinity keeps every load agent off the node of this run's server
	// (the scheduler honours it whichever is placed first); the preferred term spreads
	// the load agents over nodes of their own where there are enough.
	affinity := &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: serverLabels},
			TopologyKey:   hostnameKey,
		}},
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 100,
			PodAffinityTerm: corev1.PodAffinityTerm{
				LabelSelector: &metav1.LabelSelector{MatchLabels: loadLabels},
				TopologyKey:   hostnameKey,
			},
		}},
	}}
	agents := int32(o.Agents)
	indexed := batchv1.IndexedCompletion
	job := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      jobName(o.RunID),
			Namespace: o.Namespace,
			Labels:    loadLabels,
		},
		Spec: batchv1.JobSpec{
			CompletionMode: &indexed,
			Completions:    &agents,
			Parallelism:    &agents,
			// An agent that fails fails the run: no second pod for its index.
			BackoffLimit: ptr(int32(0)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: loadLabels},
				// Kubernetes expands $(JOB_COMPLETION_INDEX), which the Job controller
				// sets in each pod's environment, in the arguments.
				Spec: podSpec(agentContainer(o, o.LoadImage, RoleLoad, "load-$(JOB_COMPLETION_INDEX)", o.AgentCPUs, o.AgentMemoryMiB), o.RunID, o.AgentNodeSelector, affinity),
			},
		},
	}
	return Objects{Server: server, Secret: secret(o), Service: serverService(o), Policies: policies(o), Load: job}, nil
}

// podSpec is what the server's and the load agents' pods share.
func podSpec(c corev1.Container, runID string, nodeSelector map[string]string, affinity *corev1.Affinity) corev1.PodSpec {
	var sel map[string]string
	if len(nodeSelector) > 0 {
		sel = make(map[string]string, len(nodeSelector))
		for k, v := range nodeSelector {
			sel[k] = v
		}
	}
	return corev1.PodSpec{
		Containers: []corev1.Container{c},
		// An agent that exits is not restarted: the coordinator sees it gone and says so.
		RestartPolicy: corev1.RestartPolicyNever,
		NodeSelector:  sel,
		Affinity:      affinity,
		// Agents do not talk to the API server, and the services' variables are noise
		// in the environment a contender inherits.
		AutomountServiceAccountToken: ptr(false),
		EnableServiceLinks:           ptr(false),
		SecurityContext:              podSecurity(),
		Volumes:                      volumes(runID),
	}
}

// agentContainer runs arena agent in role from image, named name, on o's port, with cpus
// whole cores and memMiB of memory, requests equal to limits (Guaranteed QoS); it reads the
// run's secret from its mount and sends load only to the server's Service.
func agentContainer(o Options, image, role, name string, cpus, memMiB int) corev1.Container {
	port := o.Port
	res := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(int64(cpus), resource.DecimalSI),
		corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", memMiB)),
	}
	fieldEnv := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
	}
	return corev1.Container{
		Name:            "agent",
		Image:           image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         []string{"arena"},
		Args: []string{"agent", "--listen", "0.0.0.0:" + strconv.Itoa(port), "--name", name, "--role", role,
			"--secret-file", secretDir + "/" + SecretKey, "--server-address", serviceName(o.RunID)},
		Ports: []corev1.ContainerPort{{Name: portName, ContainerPort: int32(port), Protocol: corev1.ProtocolTCP}},
		// The agent records these with its results: where it ran.
		Env: []corev1.EnvVar{fieldEnv("POD_IP", "status.podIP"), fieldEnv("NODE_NAME", "spec.nodeName"),
			{Name: "HOME", Value: "/tmp"}}, // the root is read-only: tools' caches go to /tmp
		Resources:       corev1.ResourceRequirements{Requests: res, Limits: res.DeepCopy()},
		SecurityContext: containerSecurity(),
		VolumeMounts:    mounts(),
		// A TCP probe: the kubelet holds no secret, and /v1/hello answers it 401.
		ReadinessProbe: &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{
				Port: intstr.FromString(portName),
			}},
			PeriodSeconds:    2,
			FailureThreshold: 3,
		},
	}
}

func ptr[T any](v T) *T { return &v }
