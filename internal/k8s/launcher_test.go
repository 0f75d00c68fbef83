package k8s

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/arena-lab/arena/internal/k8s/k8stest"
)

// address gives each pod an IP that says which agent it is: .100 the server, .1, .2, …
// the load agents by index + 1.
func address(p *corev1.Pod) string {
	if p.Labels[LabelRole] == RoleServer {
		return "10.0.0.100"
	}
	i, _ := strconv.Atoi(p.Labels[IndexKey])
	return "10.0.0." + strconv.Itoa(i+1)
}

func launchOptions() Options {
	o := goldenOptions()
	o.RunID = "t1"
	return o
}

// progress is a Launcher.Progress that closes seen the first time a line satisfies match.
type progress struct {
	mu    sync.Mutex
	lines []string
	match func(string) bool
	seen  chan struct{}
}

func newProgress(match func(string) bool) *progress {
	return &progress{match: match, seen: make(chan struct{})}
}

func (p *progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := string(b)
	p.lines = append(p.lines, line)
	if p.match != nil && p.match(line) {
		p.match = nil
		close(p.seen)
	}
	return len(b), nil
}

// leftovers lists the run's pods and jobs still on the fake cluster.
func leftovers(t *testing.T, client *fake.Clientset, o Options) []string {
	t.Helper()
	o = o.WithDefaults()
	sel := metav1.ListOptions{LabelSelector: LabelRun + "=" + o.RunID}
	var left []string
	pods, err := client.CoreV1().Pods(o.Namespace).List(context.Background(), sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		left = append(left, "pod/"+p.Name)
	}
	jobs, err := client.BatchV1().Jobs(o.Namespace).List(context.Background(), sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs.Items {
		left = append(left, "job/"+j.Name)
	}
	return append(left, guardsLeft(t, client, o.Namespace, sel)...)
}

// guardsLeft lists the run's Secret, Service and NetworkPolicies still on the cluster.
func guardsLeft(t *testing.T, client *fake.Clientset, ns string, sel metav1.ListOptions) []string {
	t.Helper()
	var left []string
	secrets, err := client.CoreV1().Secrets(ns).List(context.Background(), sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range secrets.Items {
		left = append(left, "secret/"+x.Name)
	}
	services, err := client.CoreV1().Services(ns).List(context.Background(), sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range services.Items {
		left = append(left, "service/"+x.Name)
	}
	policies, err := client.NetworkingV1().NetworkPolicies(ns).List(context.Background(), sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range policies.Items {
		left = append(left, "networkpolicy/"+x.Name)
	}
	return left
}

// Every agent ready: Launch returns the server's address and the load agents' in index
// order, and leaves them running; Cleanup then removes the pod, the Job and its pods.
func TestK8sLaunchReady(t *testing.T) {
	client := fake.NewSimpleClientset()
	(&k8stest.Cluster{Client: client, Kubelet: func(p *corev1.Pod) *corev1.PodStatus { return k8stest.Running(address(p)) }}).Start(t)
	o := launchOptions()
	l := &Launcher{Client: client, Options: o, Poll: 20 * time.Millisecond, Timeout: 10 * time.Second}
	agents, err := l.Launch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := Agents{Server: "10.0.0.100:7600", Load: []string{"10.0.0.1:7600", "10.0.0.2:7600", "10.0.0.3:7600", "10.0.0.4:7600"}}
	if fmt.Sprint(agents) != fmt.Sprint(want) {
		t.Errorf("agents %v, want %v", agents, want)
	}
	if left := leftovers(t, client, o); len(left) != 10 {
		t.Errorf("after a launch: %v, want the server pod, the job and its 4 pods, the secret, the service and 2 network policies", left)
	}
	sec, err := client.CoreV1().Secrets("arena").Get(context.Background(), "arena-t1-secret", metav1.GetOptions{})
	if err != nil || sec.StringData[SecretKey] != o.Secret {
		t.Errorf("the run's secret on the cluster: %v, %v", sec, err)
	}
	if _, err := client.CoreV1().Pods("arena").Get(context.Background(), "arena-t1-server", metav1.GetOptions{}); err != nil {
		t.Fatalf("the server pod is not where the manifests say: %v", err)
	}
	if err := l.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if left := leftovers(t, client, o); len(left) != 0 {
		t.Errorf("after Cleanup: %v", left)
	}
	if err := l.Cleanup(context.Background()); err != nil {
		t.Errorf("a second Cleanup, with nothing left: %v", err)
	}
}

// A load agent's pod fails: Launch names it, and deletes everything the run created.
func TestK8sLaunchPodFailed(t *testing.T) {
	client := fake.NewSimpleClientset()
	(&k8stest.Cluster{Client: client, Kubelet: func(p *corev1.Pod) *corev1.PodStatus {
		if p.Labels[IndexKey] == "2" {
			return &corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
				Name:  "agent",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}},
			}}}
		}
		return k8stest.Running(address(p))
	}}).Start(t)
	o := launchOptions()
	l := &Launcher{Client: client, Options: o, Poll: 20 * time.Millisecond, Timeout: 10 * time.Second}
	_, err := l.Launch(context.Background())
	if err == nil {
		t.Fatal("Launch succeeded with a failed pod")
	}
	for _, want := range []string{"pod arena-t1-load-2-", "failed", "exit code 1", "kubectl logs"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if left := leftovers(t, client, o); len(left) != 0 {
		t.Errorf("left after the failure: %v", left)
	}
}

// An image the nodes cannot pull fails the launch at once, with what to do.
func TestK8sLaunchImagePullFails(t *testing.T) {
	client := fake.NewSimpleClientset()
	(&k8stest.Cluster{Client: client, Kubelet: func(p *corev1.Pod) *corev1.PodStatus {
		return &corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
			Name:  "agent",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "pull access denied for arena"}},
		}}}
	}}).Start(t)
	o := launchOptions()
	l := &Launcher{Client: client, Options: o, Poll: 20 * time.Millisecond, Timeout: time.Minute}
	start := time.Now()
	_, err := l.Launch(context.Background())
	if err == nil || !strings.Contains(err.Error(), "ErrImagePull") || !strings.Contains(err.Error(), "push it") {
		t.Fatalf("error %v, want ErrImagePull and what to do", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %s: an image that cannot be pulled is not waited for", took)
	}
	if left := leftovers(t, client, o); len(left) != 0 {
		t.Errorf("left after the failure: %v", left)
	}
}

// Ctrl-C while the pods are pending: Launch deletes everything and returns an error that
// is context.Canceled.
func TestK8sLaunchCancelled(t *testing.T) {
	client := fake.NewSimpleClientset()
	(&k8stest.Cluster{Client: client, Kubelet: func(p *corev1.Pod) *corev1.PodStatus {
		return &corev1.PodStatus{Phase: corev1.PodPending}
	}}).Start(t)
	o := launchOptions()
	// Cancelled once the launcher has seen every pod pending (the last one created is
	// index 0).
	seen := newProgress(func(line string) bool { return strings.Contains(line, "arena-t1-load-0-q7xz (pending)") })
	l := &Launcher{Client: client, Options: o, Poll: 20 * time.Millisecond, Timeout: time.Minute, Progress: seen}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-seen.seen:
			cancel()
		case <-time.After(10 * time.Second):
			t.Error("the launcher never reported the pods pending")
			cancel()
		}
	}()
	_, err := l.Launch(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if !strings.Contains(err.Error(), "arena-t1-load-0-q7xz (pending)") {
		t.Errorf("error %q does not say what was still pending", err)
	}
	if left := leftovers(t, client, o); len(left) != 0 {
		t.Errorf("left after Ctrl-C: %v", left)
	}
}

// Pods nobody can schedule: past the timeout Launch says why, and deletes everything.
func TestK8sLaunchTimeout(t *testing.T) {
	client := fake.NewSimpleClientset()
	(&k8stest.Cluster{Client: client, Kubelet: func(p *corev1.Pod) *corev1.PodStatus {
		if p.Labels[LabelRole] == RoleServer {
			return k8stest.Running(address(p))
		}
		return &corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
			Message: "0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules.",
		}}}
	}}).Start(t)
	o := launchOptions()
	l := &Launcher{Client: client, Options: o, Poll: 20 * time.Millisecond, Timeout: 300 * time.Millisecond}
	_, err := l.Launch(context.Background())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want a deadline", err)
	}
	for _, want := range []string{"not ready after 300ms", "0 of 4 load agents ready", "Unschedulable", "anti-affinity"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if left := leftovers(t, client, o); len(left) != 0 {
		t.Errorf("left after the timeout: %v", left)
	}
}

// Options that Validate refuses reach no cluster.
func TestK8sLaunchRefusesBadOptions(t *testing.T) {
	client := fake.NewSimpleClientset()
	o := launchOptions()
	o.Agents = 0
	l := &Launcher{Client: client, Options: o}
	if _, err := l.Launch(context.Background()); err == nil || !strings.Contains(err.Error(), "agents 0") {
		t.Errorf("error %v, want the bad agent count", err)
	}
	if a := client.Actions(); len(a) != 0 {
		t.Errorf("%d calls to the API, want none: %v", len(a), a)
	}
}

// A run id already in use: Launch creates nothing, and deletes nothing of the other run.
func TestK8sLaunchRunIDTaken(t *testing.T) {
	o := launchOptions()
	objs, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	client := fake.NewSimpleClientset(objs.Server)
	l := &Launcher{Client: client, Options: o, Poll: 20 * time.Millisecond, Timeout: 10 * time.Second}
	if _, err := l.Launch(context.Background()); err == nil || !strings.Contains(err.Error(), "run id t1 is taken") {
		t.Fatalf("error %v, want the run id taken", err)
	}
	if left := leftovers(t, client, o); fmt.Sprint(left) != "[pod/arena-t1-server]" {
		t.Errorf("left: %v, want the other run's server pod alone", left)
	}
}

// The Job refused (say, by a quota): Launch deletes the server pod, the secret, the service
// and the policies it created, and says why.
func TestK8sLaunchJobRefused(t *testing.T) {
	client := fake.NewSimpleClientset()
	client.PrependReactor("create", "jobs", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "arena-t1-load", errors.New("exceeded quota"))
	})
	o := launchOptions()
	l := &Launcher{Client: client, Options: o, Poll: 20 * time.Millisecond, Timeout: 10 * time.Second}
	_, err := l.Launch(context.Background())
	if err == nil || !strings.Contains(err.Error(), "create the load agents' job") || !strings.Contains(err.Error(), "exceeded quota") {
		t.Fatalf("error %v, want the job's refusal", err)
	}
	if left := leftovers(t, client, o); len(left) != 0 {
		t.Errorf("left: %v", left)
	}
}
