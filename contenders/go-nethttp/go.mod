module arena/contenders/go-nethttp

go 1.26
