ALTER TABLE `results` ADD `engine` text;--> statement-breakpoint
ALTER TABLE `results` ADD `warnings` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `results` ADD `num_objectives` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `results` ADD `best_solution_objectives` text;--> statement-breakpoint
ALTER TABLE `results` ADD `pareto_front_size` integer;--> statement-breakpoint
ALTER TABLE `results` ADD `constraint_violations` text;--> statement-breakpoint
ALTER TABLE `runs` ADD `warnings` text;