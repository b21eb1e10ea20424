module deepinfer

go 1.19
