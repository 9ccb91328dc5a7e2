-- wrk script: POST the JSON body in the file named by WRK_BODY_FILE on every request (wrk itself sends GETs).
local file = assert(io.open(os.getenv("WRK_BODY_FILE"), "rb"))
wrk.method = "POST"
wrk.body = file:read("*a")
wrk.headers["Content-Type"] = "application/json"
file:close()
