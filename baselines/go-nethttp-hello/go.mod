module arena/baselines/go-nethttp-hello

go 1.26
