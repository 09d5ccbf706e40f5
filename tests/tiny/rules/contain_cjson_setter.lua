-- Changes its own cjson's settings (contain_cjson_config.lua, issue 12).
local cjson = require "cjson"
cjson.encode_number_precision(1)
return {}
