{{/* Chart name. */}}
{{- define "svc.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified app name: also the Service name clients use. */}}
{{- define "svc.fullname" -}}
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

{{- define "svc.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "svc.selectorLabels" -}}
app.kubernetes.io/name: {{ include "svc.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "svc.labels" -}}
helm.sh/chart: {{ include "svc.chart" . }}
{{ include "svc.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "svc.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "svc.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* One image for the gateway and the sidecar. */}}
{{- define "svc.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* True (non-empty) when provider keys are given inline. */}}
{{- define "svc.inlineProviderKeys" -}}
{{- if or .Values.providers.anthropicApiKey .Values.providers.openaiApiKey .Values.providers.openrouterApiKey }}true{{ end }}
{{- end }}

{{/* The provider Secret; the install fails when no provider key is supplied (spec 1 §Cluster chart defaults). */}}
{{- define "svc.providerSecretName" -}}
{{- if .Values.providers.existingSecret }}
{{- .Values.providers.existingSecret }}
{{- else if include "svc.inlineProviderKeys" . }}
{{- printf "%s-providers" (include "svc.fullname" .) }}
{{- else }}
{{- fail "svc: no provider key supplied; set providers.anthropicApiKey, providers.openaiApiKey or providers.openrouterApiKey, or providers.existingSecret (a Secret with ANTHROPIC_API_KEY, OPENAI_API_KEY and/or OPENROUTER_API_KEY)" }}
{{- end }}
{{- end }}

{{/* True (non-empty) when the store is PostgreSQL (database.url or database.existingSecret). */}}
{{- define "svc.database" -}}
{{- if or .Values.database.url .Values.database.existingSecret }}true{{ end }}
{{- end }}

{{/* The Secret holding SVC_DATABASE_URL: the operator's, or the chart's made from database.url. */}}
{{- define "svc.databaseSecretName" -}}
{{- default (printf "%s-database" (include "svc.fullname" .)) .Values.database.existingSecret }}
{{- end }}

{{/* True (non-empty) when the chart seeds the empty keystore (template rendering only; not with PostgreSQL). */}}
{{- define "svc.seededKeystore" -}}
{{- if not (or .Values.keystore.existingSecret .Values.keystore.existingConfigMap (include "svc.database" .)) }}true{{ end }}
{{- end }}

{{/*
SVC_ALLOWED_HOSTS: the Service's in-cluster names, the ingress host when enabled, extra names, and the pod IP
(kubelet probes and Prometheus scrapes address the pod by IP). $(POD_IP) is expanded by Kubernetes.
*/}}
{{- define "svc.allowedHosts" -}}
{{- $name := include "svc.fullname" . }}
{{- $ns := .Release.Namespace }}
{{- $hosts := list $name (printf "%s.%s" $name $ns) (printf "%s.%s.svc" $name $ns) (printf "%s.%s.svc.%s" $name $ns .Values.clusterDomain) }}
{{- if .Values.ingress.enabled }}
{{- $hosts = append $hosts .Values.ingress.host }}
{{- end }}
{{- $hosts = concat $hosts .Values.gateway.extraAllowedHosts }}
{{- printf "%s,$(POD_IP)" (join "," $hosts) }}
{{- end }}

{{/* Whether the chart creates the routing/models ConfigMap (config.routingPolicy or config.models set). */}}
{{- define "svc.config" -}}
{{- if or .Values.config.routingPolicy .Values.config.models }}true{{ end }}
{{- end }}
