module arena/baselines/go-nethttp-data

go 1.26
