package k8s

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// Agents are the addresses ("podIP:port") the coordinator reaches the agents at.
type Agents struct {
	Server string
	Load   []string // by completion index: Load[i] is load-i
}

// Launcher places a run's agents on a cluster and removes them.
type Launcher struct {
	Client  kubernetes.Interface
	Options Options

	// Timeout bounds the wait for every agent to be ready, image pulls included
	// (default 10 minutes: the image is large the first time a node pulls it).
	Timeout time.Duration
	// Poll is how often the pods are listed besides the watch's events (default 2 s).
	Poll time.Duration
	// CleanupTimeout bounds the deletions after a failure or Ctrl-C (default 30 s).
	CleanupTimeout time.Duration
	// Progress, when set, receives a line each time the pods' state changes.
	Progress io.Writer
}

// Container states that no wait will cure: Launch fails at once on them.
var hopeless = map[string]string{
	"ErrImagePull":               "the image cannot be pulled: push it where the nodes pull from, or load it onto them (docs/distributed.md)",
	"ImagePullBackOff":           "the image cannot be pulled: push it where the nodes pull from, or load it onto them (docs/distributed.md)",
	"InvalidImageName":           "the image name is not valid",
	"CreateContainerConfigError": "the container's configuration is refused",
	"CreateContainerError":       "the container cannot be created",
	"CrashLoopBackOff":           "the agent keeps exiting",
}

// Launch creates the server pod and the load agents' Job, waits until every agent's pod is
// running and ready, and returns their addresses. On any failure (a pod failed, an image
// cannot be pulled, the timeout passed with pods still pending, ctx ended) it deletes what
// it created before returning the error; the error wraps ctx's when ctx ended.
func (l *Launcher) Launch(ctx context.Context) (Agents, error) {
	o := l.Options.WithDefaults()
	objs, err := Build(o)
	if err != nil {
		return Agents{}, err
	}
	timeout := orDefault(l.Timeout, 10*time.Minute)
	waitCtx, cancel := context.WithTimeoutCause(ctx, timeout, errTimeout)
	defer cancel()

	pods, jobs := l.Client.CoreV1().Pods(o.Namespace), l.Client.BatchV1().Jobs(o.Namespace)
	// A server pod of this name belongs to another run with the same id: nothing was
	// created, and nothing labelled with that id may be deleted.
	if _, err := pods.Create(waitCtx, objs.Server, metav1.CreateOptions{}); err != nil {
		return Agents{}, createErr("server pod", o, err)
	}
	// The server pod's name is this run's from here on: whatever fails, everything labelled
	// with its id is deleted.
	cleanup := l.Cleanup
	if err = l.createGuards(waitCtx, objs); err != nil {
		err = createErr("run's secret, service and network policies", o, err)
	} else if _, err = jobs.Create(waitCtx, objs.Load, metav1.CreateOptions{}); err != nil {
		err = createErr("load agents' job", o, err)
	} else {
		var agents Agents
		if agents, err = l.wait(waitCtx, o); err == nil {
			return agents, nil
		}
		if ctx.Err() == nil && errors.Is(context.Cause(waitCtx), errTimeout) {
			err = fmt.Errorf("agents not ready after %s: %w", timeout, err)
		}
	}
	// ctx may have ended (Ctrl-C): the deletions get a context of their own.
	cleanCtx, cancelClean := context.WithTimeout(context.WithoutCancel(ctx), orDefault(l.CleanupTimeout, 30*time.Second))
	defer cancelClean()
	if cerr := cleanup(cleanCtx); cerr != nil {
		return Agents{}, errors.Join(err, fmt.Errorf("and cleaning up failed, delete by hand with kubectl delete %s -n %s -l %s=%s: %w", Kinds, o.Namespace, LabelRun, o.RunID, cerr))
	}
	return Agents{}, err
}

var errTimeout = errors.New("timed out")

// Kinds are the kinds of object a run places, as kubectl names them to delete them by hand.
const Kinds = "pod,job,secret,service,networkpolicy"

// createGuards creates the run's Secret (before its pods can start: the kubelet waits for
// it), the server's Service and the NetworkPolicies.
func (l *Launcher) createGuards(ctx context.Context, objs Objects) error {
	ns := objs.Server.Namespace
	if _, err := l.Client.CoreV1().Secrets(ns).Create(ctx, objs.Secret, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := l.Client.CoreV1().Services(ns).Create(ctx, objs.Service, metav1.CreateOptions{}); err != nil {
		return err
	}
	for _, p := range objs.Policies {
		if _, err := l.Client.NetworkingV1().NetworkPolicies(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

func createErr(what string, o Options, err error) error {
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("create the %s: %w (create the namespace first: kubectl create namespace %s)", what, err, o.Namespace)
	case apierrors.IsAlreadyExists(err):
		return fmt.Errorf("create the %s: %w: run id %s is taken, give another or delete that run's objects (kubectl delete %s -n %s -l %s=%s)", what, err, o.RunID, Kinds, o.Namespace, LabelRun, o.RunID)
	}
	return fmt.Errorf("create the %s: %w", what, err)
}

// wait lists the run's pods each time the watch reports a change, and every Poll besides
// (a watch can end or miss events), until every agent is ready or one cannot become so.
func (l *Launcher) wait(ctx context.Context, o Options) (Agents, error) {
	selector := labels.Set{LabelRun: o.RunID}.AsSelector().String()
	pods := l.Client.CoreV1().Pods(o.Namespace)
	tick := time.NewTicker(orDefault(l.Poll, 2*time.Second))
	defer tick.Stop()
	var events <-chan struct{}
	lastState := ""
	var lastErr error
	for {
		if events == nil {
			events = l.watch(ctx, o.Namespace, selector)
		}
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			if ctx.Err() != nil {
				return Agents{}, waitErr(ctx, lastErr)
			}
			return Agents{}, fmt.Errorf("list the run's pods: %w", err)
		}
		agents, state, err := readiness(list.Items, o)
		if err != nil {
			return Agents{}, err
		}
		if state == "" {
			return agents, nil
		}
		if state != lastState && l.Progress != nil {
			fmt.Fprintf(l.Progress, "kubernetes: %s\n", state)
		}
		lastState, lastErr = state, errors.New(state)
		if err := l.jobFailed(ctx, o); err != nil {
			return Agents{}, err
		}
		select {
		case <-ctx.Done():
			return Agents{}, waitErr(ctx, lastErr)
		case _, ok := <-events:
			if !ok {
				events = nil
			}
		case <-tick.C:
		}
	}
}

// waitErr says why the wait ended, wrapping ctx's error (context.Canceled on Ctrl-C),
// with what was still missing.
func waitErr(ctx context.Context, missing error) error {
	if missing == nil {
		return fmt.Errorf("waiting for the agents: %w", ctx.Err())
	}
	return fmt.Errorf("waiting for the agents (%v): %w", missing, ctx.Err())
}

// watch returns a channel that receives a value for each change to the run's pods and is
// closed when the watch ends, or nil when no watch could be opened (polling goes on).
func (l *Launcher) watch(ctx context.Context, namespace, selector string) <-chan struct{} {
	w, err := l.Client.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil
	}
	ch := make(chan struct{}, 1)
	go func() {
		defer close(ch)
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-w.ResultChan():
				if !ok {
					return
				}
				select {
				case ch <- struct{}{}:
				default: // a wake-up is already pending: the next List sees this change too
				}
			}
		}
	}()
	return ch
}

// jobFailed reports a Job the controller marked failed (an agent's pod failed, or was
// deleted), which readiness may not see once the pod is gone.
func (l *Launcher) jobFailed(ctx context.Context, o Options) error {
	job, err := l.Client.BatchV1().Jobs(o.Namespace).Get(ctx, jobName(o.RunID), metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("the load agents' job %s is gone (deleted by someone else?)", jobName(o.RunID))
		}
		return nil // a passing error: the next round tries again, the timeout bounds it
	}
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return fmt.Errorf("the load agents' job %s failed: %s %s", job.Name, c.Reason, c.Message)
		}
	}
	return nil
}

// readiness reads the run's pods: the agents' addresses once every one is ready; else a
// state that says what is still awaited; or an error when a pod cannot become ready.
func readiness(pods []corev1.Pod, o Options) (Agents, string, error) {
	var agents Agents
	load := make([]string, o.Agents)
	var waiting []string
	port := strconv.Itoa(o.Port)
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		if err := hopelessPod(p); err != nil {
			return Agents{}, "", err
		}
		ready := isReady(p)
		if !ready {
			waiting = append(waiting, p.Name+" "+podState(p))
		}
		switch p.Labels[LabelRole] {
		case RoleServer:
			if ready {
				agents.Server = net.JoinHostPort(p.Status.PodIP, port)
			}
		case RoleLoad:
			idx, err := completionIndex(p)
			if err != nil {
				return Agents{}, "", err
			}
			if idx >= o.Agents {
				return Agents{}, "", fmt.Errorf("pod %s has completion index %d, but the run has %d load agents", p.Name, idx, o.Agents)
			}
			if ready {
				load[idx] = net.JoinHostPort(p.Status.PodIP, port)
			}
		}
	}
	missing := 0
	for _, a := range load {
		if a == "" {
			missing++
		}
	}
	if agents.Server != "" && missing == 0 {
		agents.Load = load
		return agents, "", nil
	}
	sort.Strings(waiting)
	state := fmt.Sprintf("%d of %d load agents ready", o.Agents-missing, o.Agents)
	if agents.Server == "" {
		state = "server agent not ready, " + state
	}
	if len(waiting) > 0 {
		state += "; waiting for " + strings.Join(waiting, ", ")
	}
	return Agents{}, state, nil
}

// completionIndex reads a load agent's index from the label Kubernetes 1.28+ sets, else
// from the annotation older versions set.
func completionIndex(p *corev1.Pod) (int, error) {
	v, ok := p.Labels[IndexKey]
	if !ok {
		v, ok = p.Annotations[IndexKey]
	}
	if !ok {
		return 0, fmt.Errorf("pod %s has no %s label: is it an Indexed Job's pod?", p.Name, IndexKey)
	}
	idx, err := strconv.Atoi(v)
	if err != nil || idx < 0 {
		return 0, fmt.Errorf("pod %s: completion index %q is not a number", p.Name, v)
	}
	return idx, nil
}

// hopelessPod says why p will never be ready, or nil while it may still become so.
func hopelessPod(p *corev1.Pod) error {
	switch p.Status.Phase {
	case corev1.PodFailed, corev1.PodSucceeded:
		why := strings.TrimSpace(p.Status.Reason + " " + p.Status.Message)
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil {
				why = strings.TrimSpace(fmt.Sprintf("%s exit code %d %s", why, t.ExitCode, t.Message))
			}
		}
		if why == "" {
			why = "no reason given"
		}
		return fmt.Errorf("pod %s %s (%s): see kubectl logs -n %s %s", p.Name, strings.ToLower(string(p.Status.Phase)), why, p.Namespace, p.Name)
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			if advice, ok := hopeless[w.Reason]; ok {
				return fmt.Errorf("pod %s: %s: %s (%s)", p.Name, w.Reason, advice, w.Message)
			}
		}
	}
	return nil
}

func isReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podState is a pod's phase, and why it is not scheduled when it is not.
func podState(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Message != "" {
			return fmt.Sprintf("(%s: %s)", c.Reason, c.Message)
		}
	}
	if p.Status.Phase == "" {
		return "(created)"
	}
	return "(" + strings.ToLower(string(p.Status.Phase)) + ")"
}

// Cleanup deletes the run's Jobs, then its pods (the server's, and the load agents' that
// the Job's deletion would remove in the background anyway), found by their run label.
// Objects already gone are no error.
func (l *Launcher) Cleanup(ctx context.Context) error {
	o := l.Options.WithDefaults()
	opts := metav1.ListOptions{LabelSelector: labels.Set{LabelRun: o.RunID}.AsSelector().String()}
	background := metav1.DeletePropagationBackground
	del := metav1.DeleteOptions{PropagationPolicy: &background}
	var errs []error
	jobs := l.Client.BatchV1().Jobs(o.Namespace)
	if list, err := jobs.List(ctx, opts); err != nil {
		errs = append(errs, fmt.Errorf("list the run's jobs: %w", err))
	} else {
		for _, j := range list.Items {
			if err := jobs.Delete(ctx, j.Name, del); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("delete job %s: %w", j.Name, err))
			}
		}
	}
	pods := l.Client.CoreV1().Pods(o.Namespace)
	if list, err := pods.List(ctx, opts); err != nil {
		errs = append(errs, fmt.Errorf("list the run's pods: %w", err))
	} else {
		for _, p := range list.Items {
			if err := pods.Delete(ctx, p.Name, del); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("delete pod %s: %w", p.Name, err))
			}
		}
	}
	return errors.Join(append(errs, l.deleteGuards(ctx, opts, del))...)
}

// deleteGuards deletes the run's Secret (by its name), Service and NetworkPolicies (found by
// label).
func (l *Launcher) deleteGuards(ctx context.Context, opts metav1.ListOptions, del metav1.DeleteOptions) error {
	ns := l.Options.WithDefaults().Namespace
	var errs []error
	note := func(what string, err error) {
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
		}
	}
	secrets, services, policies := l.Client.CoreV1().Secrets(ns), l.Client.CoreV1().Services(ns), l.Client.NetworkingV1().NetworkPolicies(ns)
	// By name: the launcher's Role may not list Secrets, which would read them all.
	name := secretName(l.Options.WithDefaults().RunID)
	note("delete secret "+name, secrets.Delete(ctx, name, del))
	if list, err := services.List(ctx, opts); err == nil {
		for _, x := range list.Items {
			note("delete service "+x.Name, services.Delete(ctx, x.Name, del))
		}
	} else {
		note("list the run's services", err)
	}
	if list, err := policies.List(ctx, opts); err == nil {
		for _, x := range list.Items {
			note("delete network policy "+x.Name, policies.Delete(ctx, x.Name, del))
		}
	} else {
		note("list the run's network policies", err)
	}
	return errors.Join(errs...)
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
