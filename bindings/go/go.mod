module deepinfer.dev/go

go 1.19
