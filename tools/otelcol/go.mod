module github.com/arenaprof/arenaprof/tools/otelcol

go 1.26.0

require (
	go.opentelemetry.io/collector/component v1.53.0
	go.opentelemetry.io/collector/confmap v1.53.0
	go.opentelemetry.io/collector/confmap/provider/envprovider v1.53.0
	go.opentelemetry.io/collector/confmap/provider/fileprovider v1.53.0
	go.opentelemetry.io/collector/exporter v1.53.0
	go.opentelemetry.io/collector/exporter/otlphttpexporter v0.147.0
	go.opentelemetry.io/collector/featuregate v1.53.0
	go.opentelemetry.io/collector/otelcol v0.147.0
	go.opentelemetry.io/collector/receiver v1.53.0
	go.opentelemetry.io/collector/receiver/otlpreceiver v0.147.0
	go.opentelemetry.io/collector/service v0.147.0
	go.opentelemetry.io/proto/otlp/collector/profiles/v1development v0.2.0
	go.opentelemetry.io/proto/otlp/profiles/v1development v0.2.0
)

require (
	github.com/felixge/fgprof v0.9.5 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/term v0.48.0 // indirect
)

require (
	github.com/arenaprof/arenaprof v0.0.0
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cenkalti/backoff/v5 v5.0.3 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/ebitengine/purego v0.9.1 // indirect
	github.com/felixge/httpsnoop v1.0.4 // indirect
	github.com/foxboron/go-tpm-keyfiles v0.0.0-20251226215517-609e4778396f // indirect
	github.com/fsnotify/fsnotify v1.9.0 // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/go-ole/go-ole v1.2.6 // indirect
	github.com/go-viper/mapstructure/v2 v2.5.0 // indirect
	github.com/gobwas/glob v0.2.3 // indirect
	github.com/golang/snappy v1.0.0 // indirect
	github.com/google/go-tpm v0.9.8 // indirect
	github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe
	github.com/google/uuid v1.6.0 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.27.7 // indirect
	github.com/hashicorp/go-version v1.9.0 // indirect
	github.com/hashicorp/golang-lru/v2 v2.0.7 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/knadh/koanf/maps v0.1.3 // indirect
	github.com/knadh/koanf/providers/confmap v1.0.1 // indirect
	github.com/knadh/koanf/v2 v2.4.1 // indirect
	github.com/lufia/plan9stats v0.0.0-20251013123823-9fd1530e3ec3 // indirect
	github.com/mitchellh/copystructure v1.2.0 // indirect
	github.com/mitchellh/reflectwalk v1.0.2 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.3-0.20250322232337-35a7c28c31ee // indirect
	github.com/mostynb/go-grpc-compression v1.2.3 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/pierrec/lz4/v4 v4.1.25 // indirect
	github.com/power-devops/perfstat v0.0.0-20240221224432-82ca36839d55 // indirect
	github.com/prometheus/client_golang v1.23.2 // indirect
	github.com/prometheus/client_model v0.6.2 // indirect
	github.com/prometheus/common v0.67.5 // indirect
	github.com/prometheus/otlptranslator v1.0.0 // indirect
	github.com/prometheus/procfs v0.19.2 // indirect
	github.com/rs/cors v1.11.1 // indirect
	github.com/shirou/gopsutil/v4 v4.26.1 // indirect
	github.com/spf13/cobra v1.10.2 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/tklauser/go-sysconf v0.3.16 // indirect
	github.com/tklauser/numcpus v0.11.0 // indirect
	github.com/yusufpapurcu/wmi v1.2.4 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/collector v0.147.0 // indirect
	go.opentelemetry.io/collector/client v1.53.0 // indirect
	go.opentelemetry.io/collector/component/componentstatus v0.147.0 // indirect
	go.opentelemetry.io/collector/component/componenttest v0.147.0 // indirect
	go.opentelemetry.io/collector/config/configauth v1.53.0 // indirect
	go.opentelemetry.io/collector/config/configcompression v1.53.0 // indirect
	go.opentelemetry.io/collector/config/configgrpc v0.147.0 // indirect
	go.opentelemetry.io/collector/config/confighttp v0.147.0 // indirect
	go.opentelemetry.io/collector/config/configmiddleware v1.53.0 // indirect
	go.opentelemetry.io/collector/config/confignet v1.53.0 // indirect
	go.opentelemetry.io/collector/config/configopaque v1.53.0 // indirect
	go.opentelemetry.io/collector/config/configoptional v1.53.0 // indirect
	go.opentelemetry.io/collector/config/configretry v1.53.0 // indirect
	go.opentelemetry.io/collector/config/configtelemetry v0.147.0 // indirect
	go.opentelemetry.io/collector/config/configtls v1.53.0 // indirect
	go.opentelemetry.io/collector/confmap/xconfmap v0.147.0 // indirect
	go.opentelemetry.io/collector/connector v0.147.0 // indirect
	go.opentelemetry.io/collector/connector/connectortest v0.147.0 // indirect
	go.opentelemetry.io/collector/connector/xconnector v0.147.0 // indirect
	go.opentelemetry.io/collector/consumer v1.53.0 // indirect
	go.opentelemetry.io/collector/consumer/consumererror v0.147.0 // indirect
	go.opentelemetry.io/collector/consumer/consumererror/xconsumererror v0.147.0 // indirect
	go.opentelemetry.io/collector/consumer/consumertest v0.147.0 // indirect
	go.opentelemetry.io/collector/consumer/xconsumer v0.147.0 // indirect
	go.opentelemetry.io/collector/exporter/exporterhelper v0.147.0 // indirect
	go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper v0.147.0 // indirect
	go.opentelemetry.io/collector/exporter/exportertest v0.147.0 // indirect
	go.opentelemetry.io/collector/exporter/xexporter v0.147.0 // indirect
	go.opentelemetry.io/collector/extension v1.53.0 // indirect
	go.opentelemetry.io/collector/extension/extensionauth v1.53.0 // indirect
	go.opentelemetry.io/collector/extension/extensioncapabilities v0.147.0 // indirect
	go.opentelemetry.io/collector/extension/extensionmiddleware v0.147.0 // indirect
	go.opentelemetry.io/collector/extension/extensiontest v0.147.0 // indirect
	go.opentelemetry.io/collector/extension/xextension v0.147.0 // indirect
	go.opentelemetry.io/collector/internal/componentalias v0.147.0 // indirect
	go.opentelemetry.io/collector/internal/fanoutconsumer v0.147.0 // indirect
	go.opentelemetry.io/collector/internal/sharedcomponent v0.147.0 // indirect
	go.opentelemetry.io/collector/internal/telemetry v0.147.0 // indirect
	go.opentelemetry.io/collector/pdata v1.53.0 // indirect
	go.opentelemetry.io/collector/pdata/pprofile v0.147.0 // indirect
	go.opentelemetry.io/collector/pdata/testdata v0.147.0 // indirect
	go.opentelemetry.io/collector/pdata/xpdata v0.147.0 // indirect
	go.opentelemetry.io/collector/pipeline v1.53.0 // indirect
	go.opentelemetry.io/collector/pipeline/xpipeline v0.147.0 // indirect
	go.opentelemetry.io/collector/processor v1.53.0 // indirect
	go.opentelemetry.io/collector/processor/processortest v0.147.0 // indirect
	go.opentelemetry.io/collector/processor/xprocessor v0.147.0 // indirect
	go.opentelemetry.io/collector/receiver/receiverhelper v0.147.0 // indirect
	go.opentelemetry.io/collector/receiver/receivertest v0.147.0 // indirect
	go.opentelemetry.io/collector/receiver/xreceiver v0.147.0 // indirect
	go.opentelemetry.io/collector/service/hostcapabilities v0.147.0 // indirect
	go.opentelemetry.io/contrib/bridges/otelzap v0.15.0 // indirect
	go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc v0.65.0 // indirect
	go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp v0.65.0 // indirect
	go.opentelemetry.io/contrib/otelconf v0.18.0 // indirect
	go.opentelemetry.io/contrib/propagators/b3 v1.40.0 // indirect
	go.opentelemetry.io/otel v1.40.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc v0.16.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp v0.16.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc v1.40.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp v1.40.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace v1.40.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc v1.40.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp v1.40.0 // indirect
	go.opentelemetry.io/otel/exporters/prometheus v0.60.0 // indirect
	go.opentelemetry.io/otel/exporters/stdout/stdoutlog v0.16.0 // indirect
	go.opentelemetry.io/otel/exporters/stdout/stdoutmetric v1.40.0 // indirect
	go.opentelemetry.io/otel/exporters/stdout/stdouttrace v1.40.0 // indirect
	go.opentelemetry.io/otel/log v0.16.0 // indirect
	go.opentelemetry.io/otel/metric v1.40.0 // indirect
	go.opentelemetry.io/otel/sdk v1.40.0 // indirect
	go.opentelemetry.io/otel/sdk/log v0.16.0 // indirect
	go.opentelemetry.io/otel/sdk/metric v1.40.0 // indirect
	go.opentelemetry.io/otel/trace v1.40.0 // indirect
	go.opentelemetry.io/proto/otlp v1.9.0
	go.uber.org/multierr v1.11.0 // indirect
	go.uber.org/zap v1.28.0 // indirect
	go.yaml.in/yaml/v2 v2.4.3 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/crypto v0.48.0 // indirect
	golang.org/x/exp v0.0.0-20260112195511-716be5621a96 // indirect
	golang.org/x/net v0.51.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.34.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20260128011058-8636f8732409 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260128011058-8636f8732409 // indirect
	google.golang.org/grpc v1.79.1 // indirect
	google.golang.org/protobuf v1.36.11
)

replace github.com/arenaprof/arenaprof => ../..
