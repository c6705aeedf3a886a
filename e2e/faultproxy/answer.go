package faultproxy

import (
	"fmt"
	"reflect"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// errorAnswer builds the answer a broker would give req failing with code:
// the response kind of req at its version, the error wherever that kind
// carries one for what was asked (each partition of an offset commit, each
// group or coordinator key of a batched request), every other field at its
// default.
func errorAnswer(req kmsg.Request, code int16) (kmsg.Response, error) {
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	switch r := resp.(type) {
	case *kmsg.JoinGroupResponse:
		r.ErrorCode, r.Generation = code, -1
	case *kmsg.OffsetCommitResponse:
		for _, t := range req.(*kmsg.OffsetCommitRequest).Topics {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, code
				rt.Partitions = append(rt.Partitions, rp)
			}
			r.Topics = append(r.Topics, rt)
		}
	case *kmsg.TxnOffsetCommitResponse:
		for _, t := range req.(*kmsg.TxnOffsetCommitRequest).Topics {
			rt := kmsg.NewTxnOffsetCommitResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, code
				rt.Partitions = append(rt.Partitions, rp)
			}
			r.Topics = append(r.Topics, rt)
		}
	case *kmsg.OffsetFetchResponse:
		q := req.(*kmsg.OffsetFetchRequest)
		if q.Version >= 8 {
			for _, g := range q.Groups {
				rg := kmsg.NewOffsetFetchResponseGroup()
				rg.Group, rg.ErrorCode = g.Group, code
				r.Groups = append(r.Groups, rg)
			}
			break
		}
		r.ErrorCode = code
		if q.Version < 2 { // no top-level error: each partition asked carries it
			for _, t := range q.Topics {
				rt := kmsg.NewOffsetFetchResponseTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewOffsetFetchResponseTopicPartition()
					rp.Partition, rp.ErrorCode, rp.Offset = p, code, -1
					rt.Partitions = append(rt.Partitions, rp)
				}
				r.Topics = append(r.Topics, rt)
			}
		}
	case *kmsg.FindCoordinatorResponse:
		q := req.(*kmsg.FindCoordinatorRequest)
		if q.Version >= 4 {
			for _, k := range q.CoordinatorKeys {
				c := kmsg.NewFindCoordinatorResponseCoordinator()
				c.Key, c.ErrorCode, c.NodeID, c.Port = k, code, -1, -1
				r.Coordinators = append(r.Coordinators, c)
			}
			break
		}
		r.ErrorCode, r.NodeID, r.Port = code, -1, -1
	case *kmsg.ListOffsetsResponse:
		for _, t := range req.(*kmsg.ListOffsetsRequest).Topics {
			rt := kmsg.NewListOffsetsResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewListOffsetsResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.Offset, rp.Timestamp = p.Partition, code, -1, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			r.Topics = append(r.Topics, rt)
		}
	case *kmsg.InitProducerIDResponse:
		r.ErrorCode, r.ProducerID, r.ProducerEpoch = code, -1, -1
	default:
		// Most kinds carry one top-level ErrorCode (SyncGroup, Heartbeat,
		// LeaveGroup, EndTxn, AddOffsetsToTxn, the group heartbeats).
		f := reflect.ValueOf(resp).Elem().FieldByName("ErrorCode")
		if !f.IsValid() || f.Kind() != reflect.Int16 {
			return nil, fmt.Errorf("no error answer for key %d (%T)", req.Key(), resp)
		}
		f.SetInt(int64(code))
	}
	return resp, nil
}

// groupsOf is the groups a request is about: its Group, its Groups, the
// groups of a batched OffsetFetch, the keys of a group FindCoordinator.
func groupsOf(req kmsg.Request) []string {
	switch q := req.(type) {
	case *kmsg.FindCoordinatorRequest:
		if q.CoordinatorType != 0 {
			return nil
		}
		if q.Version >= 4 {
			return q.CoordinatorKeys
		}
		return []string{q.CoordinatorKey}
	case *kmsg.OffsetFetchRequest:
		if q.Version >= 8 {
			var gs []string
			for _, g := range q.Groups {
				gs = append(gs, g.Group)
			}
			return gs
		}
		return []string{q.Group}
	}
	v := reflect.ValueOf(req).Elem()
	if f := v.FieldByName("Group"); f.IsValid() && f.Kind() == reflect.String {
		return []string{f.String()}
	}
	if f := v.FieldByName("Groups"); f.IsValid() && f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String {
		return f.Interface().([]string)
	}
	return nil
}

// rewriteAddresses points every broker address of a Metadata,
// FindCoordinator or DescribeCluster answer at the listener local(host,
// port) returns, so the client's next connections go through the proxy too.
// It reports whether resp is of one of those kinds.
func rewriteAddresses(resp kmsg.Response, local func(host string, port int32) (string, int32, error)) (bool, error) {
	set := func(host *string, port *int32) error {
		if *host == "" || *port < 0 {
			return nil // an error answer: no coordinator named
		}
		h, p, err := local(*host, *port)
		if err != nil {
			return err
		}
		*host, *port = h, p
		return nil
	}
	switch r := resp.(type) {
	case *kmsg.MetadataResponse:
		for i := range r.Brokers {
			if err := set(&r.Brokers[i].Host, &r.Brokers[i].Port); err != nil {
				return true, err
			}
		}
	case *kmsg.FindCoordinatorResponse:
		if err := set(&r.Host, &r.Port); err != nil {
			return true, err
		}
		for i := range r.Coordinators {
			if err := set(&r.Coordinators[i].Host, &r.Coordinators[i].Port); err != nil {
				return true, err
			}
		}
	case *kmsg.DescribeClusterResponse:
		for i := range r.Brokers {
			if err := set(&r.Brokers[i].Host, &r.Brokers[i].Port); err != nil {
				return true, err
			}
		}
	default:
		return false, nil
	}
	return true, nil
}
