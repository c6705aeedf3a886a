module github.com/streamshift/streamshift

go 1.26.8
