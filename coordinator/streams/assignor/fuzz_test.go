package assignor

import (
	"fmt"
	"testing"
)

// FuzzStickyAssign: members report arbitrary owned tasks and offsets
// (unknown subtopologies, negative or huge partitions, duplicates); the
// assignor must answer within its invariants and never panic.
func FuzzStickyAssign(f *testing.F) {
	f.Add([]byte{3, 2, 1, 5, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(1))
	f.Add([]byte{9, 9, 9, 9, 200, 255, 0, 0, 1}, uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, standbys uint8) {
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return int(b)
		}
		var topo describer
		for i := range next() % 4 {
			topo = append(topo, Subtopology{ID: fmt.Sprint(i), NumTasks: int32(next() % 9), Stateful: next()%2 == 0})
		}
		spec := GroupSpec{Members: map[string]MemberSpec{}, Configs: map[string]string{ConfigNumStandbyReplicas: fmt.Sprint(standbys % 5)}}
		for i := range 1 + next()%8 {
			ms := MemberSpec{ProcessID: fmt.Sprint(next() % 4), ActiveTasks: Tasks{}, StandbyTasks: Tasks{},
				TaskOffsets: map[string]map[int32]int64{}}
			for range next() % 4 {
				sub := fmt.Sprint(next() % 5)
				ms.ActiveTasks[sub] = append(ms.ActiveTasks[sub], int32(next()-100))
			}
			for range next() % 4 {
				sub := fmt.Sprint(next() % 5)
				ms.StandbyTasks[sub] = append(ms.StandbyTasks[sub], int32(next()%12))
			}
			for range next() % 3 {
				sub := fmt.Sprint(next() % 5)
				if ms.TaskOffsets[sub] == nil {
					ms.TaskOffsets[sub] = map[int32]int64{}
				}
				ms.TaskOffsets[sub][int32(next()%12)] = int64(next()) - 50
			}
			spec.Members[fmt.Sprintf("m%d", i)] = ms
		}
		ga, err := StickyTaskAssignor{}.Assign(spec, topo)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, spec, topo, ga)
	})
}
