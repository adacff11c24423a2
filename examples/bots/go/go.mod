module example.com/refereebot

go 1.19
