module splitfile

go 1.26
