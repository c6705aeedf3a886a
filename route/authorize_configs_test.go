package route

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy/proxytest"
)

// TestAuthorizeGroupConfigs: a served group's configs are described and
// altered only by a principal the broker allows DESCRIBE_CONFIGS and
// ALTER_CONFIGS on the cluster (a broker before 4.0 knows no GROUP config
// resource to ask about); anyone else gets Kafka 4.4's
// GROUP_AUTHORIZATION_FAILED "Group authorization failed." for the group's
// resource and changes nothing.
func TestAuthorizeGroupConfigs(t *testing.T) {
	alter := func(t *testing.T, e *env, c *proxytest.Conn, value string) kmsg.IncrementalAlterConfigsResponseResource {
		t.Helper()
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r := groupResource("app")
		r.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{set("streams.num.standby.replicas", value)}
		req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{r}
		resp := respond[*kmsg.IncrementalAlterConfigsResponse](e, c, req)
		if len(resp.Resources) != 1 {
			t.Fatalf("alter: %+v", resp)
		}
		return resp.Resources[0]
	}
	describe := func(t *testing.T, e *env, c *proxytest.Conn) kmsg.DescribeConfigsResponseResource {
		t.Helper()
		req := kmsg.NewPtrDescribeConfigsRequest()
		g := kmsg.NewDescribeConfigsRequestResource()
		g.ResourceType, g.ResourceName, g.ConfigNames = kmsg.ConfigResourceTypeGroupConfig, "app", []string{"streams.num.standby.replicas"}
		req.Resources = []kmsg.DescribeConfigsRequestResource{g}
		resp := respond[*kmsg.DescribeConfigsResponse](e, c, req)
		if len(resp.Resources) != 1 {
			t.Fatalf("describe: %+v", resp)
		}
		return resp.Resources[0]
	}
	served := func(t *testing.T, e *env, c *proxytest.Conn) {
		t.Helper()
		if resp := respond[*kmsg.StreamsGroupHeartbeatResponse](e, c, aclJoin("app", "m-1", "in")); resp.ErrorCode != 0 {
			t.Fatalf("join: %+v", resp)
		}
	}

	t.Run("denied", func(t *testing.T) {
		e := newEnv(t, direct)
		alice := e.conn(aliceACL())
		served(t, e, alice)
		refused := func(code int16, msg *string) bool {
			return code == kerr.GroupAuthorizationFailed.Code && msg != nil && *msg == "Group authorization failed."
		}
		if r := alter(t, e, alice, "1"); !refused(r.ErrorCode, r.ErrorMessage) {
			t.Fatalf("alter without ALTER_CONFIGS: %v %v, want GROUP_AUTHORIZATION_FAILED", kerr.ErrorForCode(r.ErrorCode), deref(r.ErrorMessage))
		}
		if r := describe(t, e, alice); !refused(r.ErrorCode, r.ErrorMessage) || len(r.Configs) != 0 {
			t.Fatalf("describe without DESCRIBE_CONFIGS: %v %v %+v, want GROUP_AUTHORIZATION_FAILED", kerr.ErrorForCode(r.ErrorCode), deref(r.ErrorMessage), r.Configs)
		}
		if got := e.coord.DescribeGroupConfigs("app", []string{"streams.num.standby.replicas"}); len(got) != 1 || got[0].Overridden {
			t.Fatalf("a refused alter changed the group's configs: %+v", got)
		}
	})
	t.Run("allowed", func(t *testing.T) {
		e := newEnv(t, direct)
		alice := e.conn(aliceACL(
			allowing(kmsg.ACLResourceTypeCluster, kmsg.ACLOperationAlterConfigs),
			allowing(kmsg.ACLResourceTypeCluster, kmsg.ACLOperationDescribeConfigs)))
		served(t, e, alice)
		if r := alter(t, e, alice, "1"); r.ErrorCode != 0 {
			t.Fatalf("alter with ALTER_CONFIGS: %v %v", kerr.ErrorForCode(r.ErrorCode), deref(r.ErrorMessage))
		}
		r := describe(t, e, alice)
		if r.ErrorCode != 0 || len(r.Configs) != 1 || r.Configs[0].Value == nil || *r.Configs[0].Value != "1" {
			t.Fatalf("describe with DESCRIBE_CONFIGS: %v %+v", kerr.ErrorForCode(r.ErrorCode), r.Configs)
		}
	})
}
