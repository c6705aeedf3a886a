#!/usr/bin/env bash
# Kafka 4.4 command-line tools from the Maven-built e2e/tools-4.4 classpath, by their script name:
#   tool.sh kafka-streams-groups --bootstrap-server 127.0.0.1:PORT --describe --group G
#   tool.sh kafka-acls | kafka-configs | kafka-consumer-groups | kafka-features | kafka-topics | kafka-groups ...
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ $# -ge 1 ] || { sed -n '2,4p' "$0" >&2; exit 2; }
name=$1; shift
case "$name" in
  kafka-streams-groups) main=org.apache.kafka.tools.streams.StreamsGroupCommand ;;
  kafka-consumer-groups) main=org.apache.kafka.tools.consumer.group.ConsumerGroupCommand ;;
  kafka-share-groups) main=org.apache.kafka.tools.consumer.group.ShareGroupCommand ;;
  kafka-groups) main=org.apache.kafka.tools.GroupsCommand ;;
  kafka-configs) main=org.apache.kafka.tools.ConfigCommand ;;
  kafka-features) main=org.apache.kafka.tools.FeatureCommand ;;
  kafka-topics) main=org.apache.kafka.tools.TopicCommand ;;
  kafka-broker-api-versions) main=org.apache.kafka.tools.BrokerApiVersionsCommand ;;
  kafka-get-offsets) main=org.apache.kafka.tools.GetOffsetShell ;;
  kafka-transactions) main=org.apache.kafka.tools.TransactionsCommand ;;
  kafka-acls) main=org.apache.kafka.tools.AclCommand ;;
  *) die "unknown tool $name" ;;
esac
lib=$(lib_of tools-4.4)
exec "$JAVA" -Xmx256m -XX:TieredStopAtLevel=1 -Dlog4j2.configurationFile="$E2E_ROOT/config/log4j2-tools.properties" \
  -cp "$lib/*" "$main" "$@"
