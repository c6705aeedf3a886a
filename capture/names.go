package capture

import "strings"

// kafkaName is the JSON name Kafka gives the field goName of the kmsg struct
// typeName: the generated table where kmsg renamed it, else the Go name in
// Kafka's camel case (GroupID → groupId).
func kafkaName(typeName, goName string) string {
	if n, ok := kafkaNames[typeName+"."+goName]; ok {
		return n
	}
	return heuristicName(goName)
}

// heuristicName undoes kmsg's Go initialisms: ID, IDs, ACL, SASL, TxN.
func heuristicName(goName string) string {
	n := goName
	for _, r := range [...][2]string{{"IDs", "Ids"}, {"ID", "Id"}, {"ACLs", "Acls"}, {"ACL", "Acl"}, {"SASL", "Sasl"}, {"URL", "Url"}} {
		n = strings.ReplaceAll(n, r[0], r[1])
	}
	return lowerFirst(n)
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
