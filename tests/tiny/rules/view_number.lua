-- view must be a function.
return { categories = { "x" }, view = 3, classify = function() return "x" end }
