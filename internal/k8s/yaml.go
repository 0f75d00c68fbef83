package k8s

import (
	"bytes"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"
)

// YAML writes the objects Build makes for o as YAML documents separated by "---", in the
// order they are created, the same bytes for the same o.
func YAML(o Options) ([]byte, error) {
	objs, err := Build(o)
	if err != nil {
		return nil, err
	}
	o = o.WithDefaults()
	var b bytes.Buffer
	fmt.Fprintf(&b, "# arena agents for run %s: the server agent (a Pod) and %d load agents (an Indexed Job),\n", o.RunID, o.Agents)
	fmt.Fprintf(&b, "# as arena's Kubernetes launcher creates them, with the run's secret (a Secret: keep this\n")
	fmt.Fprintf(&b, "# file as you would the secret), the server's Service, the NetworkPolicies that let only the\n")
	fmt.Fprintf(&b, "# coordinator reach the agents and only the load agents reach the server, and the Role the\n")
	fmt.Fprintf(&b, "# launcher needs (bind it: kubectl create rolebinding arena-launcher -n %s --role arena-launcher --user <you>).\n", o.Namespace)
	fmt.Fprintf(&b, "# Apply with:\n")
	fmt.Fprintf(&b, "#   kubectl create namespace %s   # once\n", o.Namespace)
	fmt.Fprintf(&b, "#   kubectl apply -f <this file>\n")
	fmt.Fprintf(&b, "# and remove with: kubectl delete %s -n %s -l %s=%s\n", Kinds, o.Namespace, LabelRun, o.RunID)
	all := []any{LauncherRole(o.Namespace), objs.Server, objs.Secret, objs.Service}
	for _, p := range objs.Policies {
		all = append(all, p)
	}
	for _, obj := range append(all, objs.Load) {
		doc, err := marshal(obj)
		if err != nil {
			return nil, err
		}
		b.WriteString("---\n")
		b.Write(doc)
	}
	return b.Bytes(), nil
}

// marshal writes obj as YAML without the fields a new object leaves null or empty
// (creationTimestamp: null, status: {}), which only the API server fills.
func marshal(obj any) ([]byte, error) {
	j, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		return nil, err
	}
	prune(m)
	// sigs.k8s.io/yaml writes map keys sorted, so the output is deterministic.
	return yaml.Marshal(m)
}

// prune drops null values, and maps that are empty once pruned, at every depth of m.
func prune(m map[string]any) {
	for k, v := range m {
		switch v := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			prune(v)
			if len(v) == 0 {
				delete(m, k)
			}
		case []any:
			for _, e := range v {
				if em, ok := e.(map[string]any); ok {
					prune(em)
				}
			}
		}
	}
}
