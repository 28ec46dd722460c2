// kube-validate: reads the multi-document YAML that `helm template` prints (stdin, or the files
// named) and decodes every object into its Kubernetes API type, chosen by apiVersion and kind, with
// unknown and duplicate fields refused, as the API server's strict field validation does
// (sigs.k8s.io/yaml to JSON, then sigs.k8s.io/json's strict decoder). A kind it has no type for fails too: an object nobody
// checked must not pass. Then the checks the API server makes before any controller sees an object
// and that need no cluster: names and label values are valid, a selector matches its template's
// labels. Prints one line per object ("apps/v1 StatefulSet weir") and exits 0, or prints every
// problem and exits 1.
//
// The types are the API server's own (k8s.io/api, the release pinned in go.mod) and, for the
// Prometheus Operator's ServiceMonitor and PodMonitor, the operator's own Go API module.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// object is what every decoded type offers: its metadata.
type object interface {
	GetName() string
	GetLabels() map[string]string
	GetAnnotations() map[string]string
}

// kinds maps "apiVersion kind" to a new value of its Go type: the kinds the chart renders. Anything
// else is refused, so a template that adds a kind adds its type here.
var kinds = map[string]func() object{
	"v1 ConfigMap":                            func() object { return &corev1.ConfigMap{} },
	"v1 Service":                              func() object { return &corev1.Service{} },
	"apps/v1 StatefulSet":                     func() object { return &appsv1.StatefulSet{} },
	"policy/v1 PodDisruptionBudget":           func() object { return &policyv1.PodDisruptionBudget{} },
	"autoscaling/v2 HorizontalPodAutoscaler":  func() object { return &autoscalingv2.HorizontalPodAutoscaler{} },
	"monitoring.coreos.com/v1 ServiceMonitor": func() object { return &monitoringv1.ServiceMonitor{} },
	"monitoring.coreos.com/v1 PodMonitor":     func() object { return &monitoringv1.PodMonitor{} },
}

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

func main() {
	var input []byte
	var err error
	if len(os.Args) > 1 {
		for _, f := range os.Args[1:] {
			b, e := os.ReadFile(f)
			if e != nil {
				fail([]string{e.Error()})
			}
			input = append(append(input, b...), []byte("\n---\n")...)
		}
	} else if input, err = io.ReadAll(os.Stdin); err != nil {
		fail([]string{err.Error()})
	}
	var problems []string
	count := 0
	for i, doc := range docSeparator.Split(string(input), -1) {
		source := sourceOf(doc)
		if isEmpty(doc) {
			continue
		}
		line, err := check([]byte(doc))
		where := fmt.Sprintf("document %d", i+1)
		if source != "" {
			where += " (" + source + ")"
		}
		if err != nil {
			problems = append(problems, where+": "+err.Error())
			continue
		}
		count++
		fmt.Println(line)
	}
	if count == 0 && len(problems) == 0 {
		problems = append(problems, "no objects in the input")
	}
	if len(problems) > 0 {
		fail(problems)
	}
}

func fail(problems []string) {
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, p)
	}
	os.Exit(1)
}

// sourceOf returns the "# Source: chart/templates/x.yaml" comment helm puts above each object.
func sourceOf(doc string) string {
	for _, l := range strings.Split(doc, "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(l), "# Source: "); ok {
			return s
		}
	}
	return ""
}

// isEmpty: only comments and blank lines (helm prints a template that renders nothing that way).
func isEmpty(doc string) bool {
	for _, l := range strings.Split(doc, "\n") {
		t := strings.TrimSpace(l)
		if t != "" && !strings.HasPrefix(t, "#") {
			return false
		}
	}
	return true
}

func check(doc []byte) (string, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return "", err
	}
	if tm.APIVersion == "" || tm.Kind == "" {
		return "", errors.New("apiVersion and kind are required")
	}
	key := tm.APIVersion + " " + tm.Kind
	newObject, ok := kinds[key]
	if !ok {
		return "", fmt.Errorf("%s: no API type known for this apiVersion and kind", key)
	}
	obj := newObject()
	// As the API server decodes a request: YAML to JSON with duplicate keys refused, then
	// sigs.k8s.io/json's strict decoding (field names matched case-sensitively; every unknown
	// or duplicate field reported with its path).
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return "", fmt.Errorf("%s: %w", key, err)
	}
	strict, err := sigsjson.UnmarshalStrict(js, obj, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return "", fmt.Errorf("%s: %w", key, err)
	}
	if len(strict) > 0 {
		msgs := make([]string, len(strict))
		for i, e := range strict {
			msgs[i] = e.Error()
		}
		return "", fmt.Errorf("%s: %s", key, strings.Join(msgs, "; "))
	}
	var problems []string
	if obj.GetName() == "" {
		problems = append(problems, "metadata.name is empty")
	}
	for _, msg := range validation.IsDNS1123Subdomain(obj.GetName()) {
		problems = append(problems, "metadata.name: "+msg)
	}
	problems = append(problems, labelProblems("metadata.labels", obj.GetLabels())...)
	problems = append(problems, kindProblems(obj)...)
	if len(problems) > 0 {
		return "", fmt.Errorf("%s %s: %s", key, obj.GetName(), strings.Join(problems, "; "))
	}
	return key + " " + obj.GetName(), nil
}

func labelProblems(path string, l map[string]string) []string {
	var out []string
	for k, v := range l {
		for _, msg := range validation.IsQualifiedName(k) {
			out = append(out, fmt.Sprintf("%s key %q: %s", path, k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			out = append(out, fmt.Sprintf("%s[%s] %q: %s", path, k, v, msg))
		}
	}
	return out
}

// kindProblems: what the API server would refuse for these kinds, checkable without a cluster.
func kindProblems(obj object) []string {
	var out []string
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		out = append(out, selectorProblems("spec.selector", o.Spec.Selector, o.Spec.Template.Labels)...)
		// The pods mount each claim template as a volume of its name.
		claims := map[string]bool{}
		for i, c := range o.Spec.VolumeClaimTemplates {
			for _, msg := range validation.IsDNS1123Label(c.Name) {
				out = append(out, fmt.Sprintf("spec.volumeClaimTemplates[%d].metadata.name: %s", i, msg))
			}
			claims[c.Name] = true
		}
		out = append(out, podProblems("spec.template.spec", &o.Spec.Template.Spec, claims)...)
		if o.Spec.ServiceName == "" {
			out = append(out, "spec.serviceName is empty")
		}
	case *policyv1.PodDisruptionBudget:
		if (o.Spec.MinAvailable == nil) == (o.Spec.MaxUnavailable == nil) {
			out = append(out, "spec: exactly one of minAvailable and maxUnavailable")
		}
		if o.Spec.Selector == nil {
			out = append(out, "spec.selector is required")
		}
	case *corev1.Service:
		for i, p := range o.Spec.Ports {
			if p.Port < 1 || p.Port > 65535 {
				out = append(out, fmt.Sprintf("spec.ports[%d].port %d out of range", i, p.Port))
			}
			for _, msg := range validation.IsValidPortName(p.Name) {
				out = append(out, fmt.Sprintf("spec.ports[%d].name: %s", i, msg))
			}
		}
	case *autoscalingv2.HorizontalPodAutoscaler:
		if o.Spec.MaxReplicas < 1 || (o.Spec.MinReplicas != nil && *o.Spec.MinReplicas > o.Spec.MaxReplicas) {
			out = append(out, "spec: minReplicas must be at most maxReplicas, maxReplicas at least 1")
		}
		if o.Spec.ScaleTargetRef.Kind == "" || o.Spec.ScaleTargetRef.Name == "" {
			out = append(out, "spec.scaleTargetRef needs kind and name")
		}
	}
	return out
}

func selectorProblems(path string, sel *metav1.LabelSelector, podLabels map[string]string) []string {
	if sel == nil {
		return []string{path + " is required"}
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return []string{path + ": " + err.Error()}
	}
	if s.Empty() || !s.Matches(labels.Set(podLabels)) {
		return []string{path + " does not match the template's labels"}
	}
	return nil
}

func podProblems(path string, spec *corev1.PodSpec, claims map[string]bool) []string {
	var out []string
	volumes := map[string]bool{}
	for name := range claims {
		volumes[name] = true
	}
	for _, v := range spec.Volumes {
		if volumes[v.Name] {
			out = append(out, fmt.Sprintf("%s.volumes: %q twice", path, v.Name))
		}
		volumes[v.Name] = true
	}
	containers := append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...)
	if len(spec.Containers) == 0 {
		out = append(out, path+".containers is empty")
	}
	for _, c := range containers {
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			out = append(out, fmt.Sprintf("%s container name %q: %s", path, c.Name, msg))
		}
		ports := map[string]bool{}
		for _, p := range c.Ports {
			if p.Name != "" {
				for _, msg := range validation.IsValidPortName(p.Name) {
					out = append(out, fmt.Sprintf("%s container %s port name %q: %s", path, c.Name, p.Name, msg))
				}
				ports[p.Name] = true
			}
		}
		for _, probe := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
			if probe != nil && probe.HTTPGet != nil && probe.HTTPGet.Port.StrVal != "" && !ports[probe.HTTPGet.Port.StrVal] {
				out = append(out, fmt.Sprintf("%s container %s: a probe names port %q, which the container does not declare", path, c.Name, probe.HTTPGet.Port.StrVal))
			}
		}
		for _, m := range c.VolumeMounts {
			if !volumes[m.Name] {
				out = append(out, fmt.Sprintf("%s container %s mounts %q, which is no volume of the pod", path, c.Name, m.Name))
			}
		}
		for _, e := range c.Env {
			for _, msg := range validation.IsEnvVarName(e.Name) {
				out = append(out, fmt.Sprintf("%s container %s env %q: %s", path, c.Name, e.Name, msg))
			}
		}
	}
	return out
}
