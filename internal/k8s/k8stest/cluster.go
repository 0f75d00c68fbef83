// Package k8stest is a fake cluster for tests: client-go's fake clientset with a Job
// controller and a kubelet played by a loop, so that a launcher can be driven offline.
package k8stest

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// The fake clientset stores objects and nothing more: no Job controller makes the Job's
// pods and no kubelet runs them. cluster plays both, as the real ones do it: for each new
// Job it creates one pod per completion index (the last index first, so that creation
// order is not index order) with the labels, annotation and environment the Job
// controller gives them, and it moves each new pod to the status that kubelet returns for
// it (nil: the pod stays pending).
type Cluster struct {
	Client  *fake.Clientset
	Kubelet func(p *corev1.Pod) *corev1.PodStatus
}

// Start runs the cluster's loops until the test ends.
func (c *Cluster) Start(t testing.TB) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		jobsDone := map[string]bool{}
		handled := map[string]bool{}
		for ctx.Err() == nil {
			jobs, _ := c.Client.BatchV1().Jobs(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
			if jobs != nil {
				for i := range jobs.Items {
					if j := &jobs.Items[i]; !jobsDone[j.Namespace+"/"+j.Name] {
						jobsDone[j.Namespace+"/"+j.Name] = true
						c.createJobPods(ctx, t, j)
					}
				}
			}
			pods, _ := c.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
			if pods != nil {
				for i := range pods.Items {
					p := &pods.Items[i]
					if handled[p.Namespace+"/"+p.Name] {
						continue
					}
					handled[p.Namespace+"/"+p.Name] = true
					if st := c.Kubelet(p); st != nil {
						p.Status = *st
						// The pod may be deleted meanwhile: then there is nothing to run.
						_, _ = c.Client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
					}
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// createJobPods does what the Job controller does for an Indexed Job.
func (c *Cluster) createJobPods(ctx context.Context, t testing.TB, j *batchv1.Job) {
	for i := int(*j.Spec.Completions) - 1; i >= 0; i-- {
		idx := strconv.Itoa(i)
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name:        fmt.Sprintf("%s-%d-q%dxz", j.Name, i, 7-i),
				Namespace:   j.Namespace,
				Labels:      map[string]string{"job-name": j.Name, indexKey: idx},
				Annotations: map[string]string{indexKey: idx},
			},
			Spec: *j.Spec.Template.Spec.DeepCopy(),
		}
		for k, v := range j.Spec.Template.Labels {
			p.Labels[k] = v
		}
		p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: "JOB_COMPLETION_INDEX", Value: idx})
		if _, err := c.Client.CoreV1().Pods(j.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil && ctx.Err() == nil {
			t.Errorf("job controller: %v", err)
		}
	}
}

// indexKey is the label and annotation Kubernetes gives an Indexed Job's pods.
const indexKey = "batch.kubernetes.io/job-completion-index"

// Running is the status of a pod whose agent answers its readiness probe at ip.
func Running(ip string) *corev1.PodStatus {
	return &corev1.PodStatus{
		Phase: corev1.PodRunning,
		PodIP: ip,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		},
	}
}
