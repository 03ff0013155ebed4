{{/* The objects' name: the release name. */}}
{{- define "a2a-egress.fullname" -}}
{{ .Release.Name }}
{{- end }}

{{/* Labels on every object; the same pair selects the gateway's pods. */}}
{{- define "a2a-egress.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}
