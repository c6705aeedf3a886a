package streams

func tasks(s string, ps ...int32) Tasks {
	b := TasksBuilder{}
	for _, p := range ps {
		b.Add(s, p)
	}
	return b.Build()
}
