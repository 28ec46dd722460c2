{{/* Names and labels, as `helm create` makes them. */}}
{{- define "weir.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "weir.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "weir.selectorLabels" -}}
app.kubernetes.io/name: {{ include "weir.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "weir.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "weir.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
weir.yaml: the user's config with the keys the chart owns. broker.client_id is the pod name (the
downward API sets WEIR_CLIENT_ID), http.port is the container's port, rules_dir is the rules
ConfigMap's mount, and the dead-letter fallback file is in the data volume unless config names one.
*/}}
{{- define "weir.config" -}}
{{- $cfg := deepCopy .Values.config }}
{{- $broker := default dict $cfg.broker }}
{{- if hasKey $broker "client_id" }}
{{- fail "config.broker.client_id is set by the chart (the pod name, ${WEIR_CLIENT_ID}); remove it" }}
{{- end }}
{{- if hasKey $cfg "rules_dir" }}
{{- fail "config.rules_dir is set by the chart (the rules ConfigMap's mount); put rule files in rules" }}
{{- end }}
{{- $http := default dict $cfg.http }}
{{- if hasKey $http "port" }}
{{- fail "config.http.port is set by the chart; use httpPort" }}
{{- end }}
{{- $_ := set $broker "client_id" "${WEIR_CLIENT_ID}" }}
{{- $_ := set $cfg "broker" $broker }}
{{- $_ := set $http "port" (int .Values.httpPort) }}
{{- $_ := set $cfg "http" $http }}
{{- $_ := set $cfg "rules_dir" (include "weir.rulesDir" .) }}
{{- $dl := default dict $cfg.dead_letter }}
{{- if not (hasKey $dl "fallback_file") }}
{{- $_ := set $dl "fallback_file" "${WEIR_DATA_DIR}/weir-dead-letter-fallback.jsonl" }}
{{- end }}
{{- range $key := list "file" "fallback_file" }}
{{- $path := get $dl $key }}
{{- if and $path (not (hasPrefix "${WEIR_DATA_DIR}/" $path)) (not (hasPrefix (printf "%s/" $.Values.dataDir) $path)) }}
{{- fail (printf "config.dead_letter.%s %q: weir writes it, and only the data volume is writable; write ${WEIR_DATA_DIR}/<name>" $key $path) }}
{{- end }}
{{- end }}
{{- $_ := set $cfg "dead_letter" $dl }}
{{- toYaml $cfg }}
{{- end }}

{{- define "weir.configDir" -}}/etc/weir/config{{- end }}
{{- define "weir.rulesDir" -}}/etc/weir/rules{{- end }}

{{/*
Seconds Kubernetes waits between SIGTERM and SIGKILL: weir's grace period (--grace-ms), the 5 s
each closing step may take past it (src/core/runtime.ts, CLOSE_FLOOR_MS), the 2 s before the process
exits (src/cli/run.ts, EXIT_WAIT_MS), and a margin. A number set by hand below that is refused.
*/}}
{{- define "weir.terminationGrace" -}}
{{- $need := add (div (add (int .Values.graceMs) 999) 1000) 5 2 -}}
{{- if kindIs "invalid" .Values.terminationGracePeriodSeconds -}}
{{- add $need (int .Values.terminationMarginSeconds) -}}
{{- else if le (int .Values.terminationGracePeriodSeconds) $need -}}
{{- fail (printf "terminationGracePeriodSeconds %d is not above weir's stop time, %d s (graceMs %d, + 5 s to close, + 2 s to exit)" (int .Values.terminationGracePeriodSeconds) $need (int .Values.graceMs)) -}}
{{- else -}}
{{- int .Values.terminationGracePeriodSeconds -}}
{{- end -}}
{{- end }}

{{- define "weir.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* http or https: https when weir.yaml has http.tls. */}}
{{- define "weir.scheme" -}}
{{- if and .Values.config.http .Values.config.http.tls }}HTTPS{{ else }}HTTP{{ end }}
{{- end }}
